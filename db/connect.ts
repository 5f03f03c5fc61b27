/**
 * Opens the database: embedded SQLite (WAL, busy timeout, foreign keys) or PostgreSQL.
 * Every dialect difference of Portico lives in db/.
 */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_READ_TIMEOUT_MS, type DatabaseConfig } from '../shared/config.js';
import { pgClient, PgPipe, STALL_MARGIN_MS } from './pg_client.js';
import { sqliteClient, sqliteReadPipe, sqliteWriteTransaction, type SqlRunner } from './sqlite_client.js';

export type { SqlRunner } from './sqlite_client.js';

// PostgreSQL returns int8 as a string by default; our int8 columns are epoch milliseconds and counters.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type Db = Knex;
export type DbOrTrx = Knex | Knex.Transaction;

export function dialectOf(db: DbOrTrx): 'sqlite' | 'postgres' {
  return (db.client as { dialect?: string }).dialect === 'postgresql' ? 'postgres' : 'sqlite';
}

/** An embedded SQLite file that is not there yet: connectDatabase would create it (a server's first start does). */
export function isMissingSqlite(config: DatabaseConfig): boolean {
  return config.kind === 'sqlite' && config.filename !== ':memory:' && !fs.existsSync(config.filename);
}

export function connectDatabase(config: DatabaseConfig): Db {
  if (config.kind === 'postgres') {
    const lockTimeoutMs = config.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    const db = knexFactory({
      // A pooled statement no answer comes for is given up a little after PostgreSQL's own lock time-out would have ended it.
      client: pgClient({ named: config.preparedStatements !== false, stallMs: lockTimeoutMs + STALL_MARGIN_MS }),
      connection: config.url,
      searchPath: config.schema ? [config.schema] : undefined,
      pool: { min: 0, max: 10, afterCreate: limitWaits(config.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, lockTimeoutMs) },
      acquireConnectionTimeout: 10_000,
      // A failed statement's error names its SQL, not its values: they reach the log (session ids, arguments).
      compileSqlOnError: false,
      log: KNEX_LOG,
    });
    const named = config.preparedStatements !== false;
    // A read there holds every read written behind it: PostgreSQL cancels one that runs too long.
    const reads = new PgPipe(db, { named, oneWritePerTurn: true, statementTimeoutMs: config.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS });
    const audit = new PgPipe(db, { named, oneWritePerTurn: false, lockTimeoutMs });
    readPipes.set(db, reads);
    auditPipes.set(db, audit);
    closeWith(db, async () => {
      await Promise.all([reads.close(), audit.close()]);
    });
    return db;
  }
  if (config.filename !== ':memory:') fs.mkdirSync(path.dirname(config.filename), { recursive: true });
  // One writing connection: SQLite has one writer at a time anyway, and it keeps transactions simple.
  const writer = sqlite(config.filename, 1, 1, WRITER_PRAGMAS);
  if (config.filename === ':memory:') return writer;
  // Reads that need no transaction run beside it (WAL: readers never wait for the writer), so a
  // read tool's SELECT does not queue behind the audit log's group commit (docs/performance.md).
  // They share one read-only connection (sqlite_client.ts ReadRunner); its pool of one serves
  // only what knex runs itself (streams).
  const reader = sqlite(config.filename, 0, 1, READER_PRAGMAS, true);
  readers.set(writer, reader);
  readPipes.set(reader, sqliteReadPipe(reader));
  closeWith(writer, () => reader.destroy());
  return writer;
}

/**
 * Every pooled connection gets `lock_timeout` (the idle-in-transaction time-out and a second): a
 * statement that waits longer for a lock fails (`unavailable`), so a table locked by a busy
 * session (a migration, a manual `LOCK`, a long `VACUUM FULL`) holds calls for a bounded time; the
 * audit pipe has it too. A lock held by an idle transaction is freed before that, by
 * `idle_in_transaction_session_timeout`, which every pooled connection also gets: a transaction that sits
 * idle between statements for longer (an instance frozen, paused or cut off in the middle of one)
 * has its session ended by PostgreSQL, and with it its locks. Without it, another instance's
 * audit batches would wait on that chain's head for as long as the dead session lasts (hours,
 * with TCP keepalive's defaults), and so would every call they carry. Portico's own transactions
 * are short; the longest wait inside one is a writing tool's handler, bounded by TOOL_TIMEOUT_MS,
 * which the configured time-out must exceed (shared/config.ts).
 */
function limitWaits(idleMs: number, lockMs: number) {
  return (connection: { query(sql: string): Promise<unknown> }, done: (error: Error | null, connection: unknown) => void): void => {
    connection.query(`set idle_in_transaction_session_timeout = ${Math.floor(idleMs)}; set lock_timeout = ${Math.floor(lockMs)}`)
      .then(() => done(null, connection), (error: Error) => done(error, connection));
  };
}

/** Closing the database closes `other` first (knex's destroy() is its client's). */
function closeWith(db: Db, other: () => Promise<void>): void {
  const client = db.client as { destroy(callback?: unknown): Promise<void> };
  const destroy = client.destroy.bind(client);
  client.destroy = async (callback?: unknown) => {
    await other();
    return destroy(callback);
  };
}

const WRITER_PRAGMAS = ['journal_mode = WAL', 'foreign_keys = ON', 'synchronous = NORMAL'];
/** query_only: a read-only tool that tried to write would fail here, not change data unaudited. */
const READER_PRAGMAS = ['query_only = ON'];
const readers = new WeakMap<Db, Db>();

/** Quick reads of compiled SQL (`?` placeholders) outside transactions, grouped per turn of the event loop. */
export interface ReadPipe {
  rows<Row>(sql: string, bindings: readonly unknown[]): Promise<Row[]>;
}
const readPipes = new WeakMap<Db, ReadPipe>();
const auditPipes = new WeakMap<Db, PgPipe>();

/**
 * Where TenantScope's query templates read outside a transaction: on PostgreSQL the pipelined
 * read connection (pg_client.ts PgPipe), on SQLite the reader's shared connection
 * (sqlite_client.ts sqliteReadPipe; `db` is then the reader, readerOf). None for a transaction
 * or an in-memory SQLite database.
 */
export function readPipeOf(db: DbOrTrx): ReadPipe | undefined {
  return db.isTransaction ? undefined : readPipes.get(db as Db);
}

/** PostgreSQL: the pipelined connection the audit log's batches on known heads are written on. */
export function auditPipeOf(db: Db): PgPipe | undefined {
  return auditPipes.get(db);
}

/**
 * Where reads outside a transaction go: on SQLite, a read-only connection beside the one writer;
 * on PostgreSQL (and an in-memory SQLite database, which a second connection cannot
 * see), the same pool. A read there sees every transaction committed before it started.
 */
export function readerOf(db: Db): Db {
  return readers.get(db) ?? db;
}

function sqlite(filename: string, min: number, max: number, pragmas: string[], readOnly = false): Db {
  return knexFactory({
    client: sqliteClient({ pragmas, readOnly }) as unknown as typeof Knex.Client,
    connection: { filename },
    useNullAsDefault: true,
    pool: { min, max },
    acquireConnectionTimeout: 10_000,
    compileSqlOnError: false,
    log: KNEX_LOG,
  });
}

/**
 * knex's own messages. A connection it could not open is also the error of the query that wanted
 * it, which Portico reports in its own words (db/errors.ts): knex's copy, with its stack, is
 * dropped. Anything else it has to say is one line on stderr.
 */
const KNEX_LOG = (() => {
  const line = (message: unknown) => {
    const text = String(message);
    if (/^(Acquire connection error|Connection Error)/.test(text)) return;
    // A failed migration is the error of migrateLatest, which its caller reports: knex's copies name
    // the failed SQL, and its advice (`knex migrate:unlock`) is a command Portico does not have.
    if (/^(Can't take lock to run migrations|If you are sure migrations are not running|migration failed with error)/.test(text)) return;
    process.stderr.write(`knex: ${text.split('\n')[0]}\n`);
  };
  return { warn: line, error: line, deprecate: line, debug: () => undefined };
})();

/** Plain SQL (`?` placeholders) through knex, on a transaction or the pool. */
export function knexSql(db: DbOrTrx): SqlRunner {
  return {
    async all<Row>(sql: string, bindings: readonly unknown[] = []) {
      const result = (await db.raw(sql, bindings as Knex.RawBinding[])) as { rows: Row[] } | Row[];
      return Array.isArray(result) ? result : result.rows;
    },
    async run(sql: string, bindings: readonly unknown[] = []) {
      await db.raw(sql, bindings as Knex.RawBinding[]);
    },
    // Many rows per statement (one round trip each on PostgreSQL), under both databases' bound-parameter limits.
    async insert(table: string, columns: readonly string[], rows: readonly unknown[][]) {
      const perStatement = Math.max(1, Math.floor(MAX_BINDINGS / columns.length));
      const tuple = `(${columns.map(() => '?').join(', ')})`;
      for (let i = 0; i < rows.length; i += perStatement) {
        const chunk = rows.slice(i, i + perStatement);
        await db.raw(`insert into ${table} (${columns.join(', ')}) values ${chunk.map(() => tuple).join(', ')}`, chunk.flat() as Knex.RawBinding[]);
      }
    },
  };
}

/** Bound parameters per statement: well under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_BINDINGS = 3_600;

/**
 * One write transaction running plain SQL: on SQLite straight on the writer's connection (no
 * query builder, no knex transaction: the cheapest write there is), on PostgreSQL a knex
 * transaction. For hot writes whose SQL is the same on both (the audit log's group commit).
 */
export function writeTransaction<T>(db: Db, work: (sql: SqlRunner) => Promise<T>): Promise<T> {
  if (dialectOf(db) === 'sqlite') return sqliteWriteTransaction(db, work);
  return db.transaction((trx) => work(knexSql(trx)));
}

/** Cheap round trip for /readyz. */
/**
 * Whether calls can be answered: the database answers, and the audit log, which every call
 * writes, can be read (a table locked by someone else fails this by the caller's deadline).
 */
export async function ready(db: Db): Promise<void> {
  await db.raw('select 1 from audit_heads limit 1');
}

export interface PoolStats {
  used: number;
  free: number;
  pending: number;
  max: number;
}

export function poolStats(db: Db): PoolStats {
  const pool = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number } }).pool;
  if (!pool) return { used: 0, free: 0, pending: 0, max: 0 };
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires(), max: pool.max };
}
