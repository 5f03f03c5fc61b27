/**
 * The embedded SQLite driver: better-sqlite3 through knex's own dialect for it, with the changes
 * below.
 *
 * Why not node-sqlite3: it runs each statement as three jobs on libuv's thread pool (prepare,
 * step, finalize). On a busy machine those threads take the CPU from the event loop at every
 * statement, and a single-core server spent about 16 % of its wall time inside node-sqlite3's
 * dispatch alone (docs/performance.md). better-sqlite3 runs a statement on the calling thread in
 * microseconds.
 *
 * What synchronous costs, and how it is avoided: SQLite's busy handler would sleep on the event
 * loop while another connection holds the write lock (a second process, the admin CLI), freezing
 * every request. So connections have no busy timeout, and a statement refused with SQLITE_BUSY is
 * tried again after a timer, for up to BUSY_BUDGET_MS, which is busy_timeout without the freeze.
 * Only plain SQLITE_BUSY is retried: SQLITE_BUSY_SNAPSHOT (a read transaction that would write
 * after someone else's commit) can never succeed and fails at once, as before.
 *
 * Prepared statements are kept per connection: knex compiles the same SQL text for the same query.
 *
 * A read-only client (`readOnly`) runs its reads at once on one shared connection (ReadRunner):
 * a synchronous statement cannot interleave with another, so no pool is needed for them.
 *
 * `sqliteWriteTransaction` runs one write transaction straight on the writer's connection, without
 * knex's query builder and transaction machinery: for the audit log's group commit, the hottest
 * write (docs/performance.md). It takes the connection from knex's pool like any other query, so
 * it still never overlaps another transaction.
 */
import { createRequire } from 'node:module';
import type { Knex } from 'knex';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
// knex's dialect classes are CommonJS modules without type declarations.
const KnexBetterSqlite3 = require('knex/lib/dialects/better-sqlite3/index.js') as new (config: Knex.Config) => KnexClient;
const KnexRunner = require('knex/lib/execution/runner.js') as new (client: unknown, builder: unknown) => KnexRunnerBase;
/**
 * The driver: better-sqlite3 12 up to Node 22, and from Node 24 on the same package's 13
 * (installed as `better-sqlite3-napi`), which is built on N-API. Node 24's node::ObjectWrap aborts
 * the process when V8 collects one of 12's statements (docs/decisions.md); 13 needs Node 22 or
 * later and crashed on Node 20 here. Same JavaScript API. Whatever else opens the file (the tests'
 * lock holders) takes it from here.
 */
export const Database = require(Number(process.versions.node.split('.')[0]) >= 24 ? 'better-sqlite3-napi' : 'better-sqlite3') as typeof BetterSqlite3;

interface KnexClient {
  connectionSettings: { filename: string };
  _formatBindings(bindings: unknown[] | undefined): unknown[];
  runner(builder: unknown): unknown;
  destroy(callback?: unknown): Promise<void>;
}

interface KnexRunnerBase {
  client: ReaderClient;
  builder: KnexBuilder;
  run(): Promise<unknown>;
}

interface KnexBuilder {
  _connection?: unknown;
  toSQL(): (QueryObject & { method?: string }) | QueryObject[];
  queryContext(): unknown;
}

interface ReaderClient {
  transacting?: boolean;
  _formatBindings(bindings: unknown[] | undefined): unknown[];
  processResponse(obj: QueryObject, runner: unknown): unknown;
  postProcessResponse(response: unknown, context: unknown): unknown;
  emit(event: string, value: unknown): boolean;
  sharedConnection(): BetterSqlite3.Database | Promise<BetterSqlite3.Database>;
}

interface QueryObject {
  sql: string;
  bindings?: unknown[];
  response?: unknown;
  context?: { lastID: number | bigint; changes: number };
}

/** SQL with `?` placeholders run on one connection: what db/ code writes when it needs no query builder. */
export interface SqlRunner {
  all<Row = Record<string, unknown>>(sql: string, bindings?: readonly unknown[]): Promise<Row[]>;
  run(sql: string, bindings?: readonly unknown[]): Promise<void>;
  /** Inserts rows (values in `columns` order) the way the dialect does it fastest. */
  insert(table: string, columns: readonly string[], rows: readonly unknown[][]): Promise<void>;
}

/**
 * SQL's lower() as PostgreSQL has it: SQLite's own folds only ASCII, so a case-insensitive filter
 * (`lower(column) like ?`, mcp/products/common.ts) found "ÉTUDES" on PostgreSQL and not here.
 * Registered on every connection, it replaces the built-in one (no index is built on lower()).
 */
function unicodeLower(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value).toLowerCase();
}

/** What SQLite's busy_timeout would wait, in total, before a statement fails as unavailable. */
const BUSY_BUDGET_MS = 5_000;
const MAX_CACHED_STATEMENTS = 256;

export interface SqliteOptions {
  /** Statements run once per new connection (journal mode, foreign keys, query_only …). */
  pragmas: string[];
  /**
   * The client only reads, outside transactions (query_only connections): a query then runs at
   * once on one shared connection, without knex's pool and runner (see ReadRunner).
   */
  readOnly?: boolean;
}

/** A knex client class for one SQLite file; pass it as knex's `client`. */
export function sqliteClient({ pragmas, readOnly = false }: SqliteOptions): new (config: Knex.Config) => object {
  /**
   * A query of the read-only client, run straight on its shared connection: a statement on
   * better-sqlite3 is synchronous, so any number of reads can share one connection without ever
   * interleaving, and neither the pool nor knex's promise chain per query is needed. Anything
   * unusual (a transaction, a builder bound to a connection, several statements) takes knex's own
   * path. Results are what knex would return (its own processResponse), and the `query` event
   * still fires (bench/statements.ts counts with it).
   *
   * Reads wait for the end of the event loop's turn (readTurn) and then run back to back: a
   * statement right after another finds SQLite's pages and code still in the CPU caches, where
   * one between two requests' JavaScript finds them evicted (docs/performance.md, item 10).
   */
  class ReadRunner extends KnexRunner {
    override async run(): Promise<unknown> {
      const query = this.builder.toSQL();
      if (this.client.transacting || this.builder._connection || Array.isArray(query)) return super.run();
      const client = this.client;
      const obj: QueryObject = { ...query };
      await readAtEndOfTurn(client, query, (connection, bindings) => execute(connection, Object.assign(obj, { bindings }), bindings));
      return client.postProcessResponse(client.processResponse(obj, this), this.builder.queryContext());
    }
  }

  return class PorticoSqlite extends KnexBetterSqlite3 {
    private shared?: BetterSqlite3.Database | Promise<BetterSqlite3.Database>;

    override runner(builder: unknown): unknown {
      return readOnly ? new ReadRunner(this, builder) : super.runner(builder);
    }

    /** The read-only client's one connection for ReadRunner, opened on first use. */
    sharedConnection(): BetterSqlite3.Database | Promise<BetterSqlite3.Database> {
      this.shared ??= this.acquireRawConnection().then(
        (connection) => (this.shared = connection),
        (error: unknown) => {
          this.shared = undefined; // the next read tries again
          throw error;
        },
      );
      return this.shared;
    }

    override async destroy(callback?: unknown): Promise<void> {
      const shared = this.shared;
      this.shared = undefined;
      if (shared) await this.destroyRawConnection(await shared);
      return super.destroy(callback);
    }

    async acquireRawConnection(): Promise<BetterSqlite3.Database> {
      const connection = new Database(this.connectionSettings.filename, { timeout: 0 });
      try {
        for (const pragma of pragmas) await retryBusy(() => connection.pragma(pragma));
        connection.function('lower', { deterministic: true }, unicodeLower);
      } catch (error) {
        connection.close();
        throw error;
      }
      return connection;
    }

    async destroyRawConnection(connection: BetterSqlite3.Database): Promise<void> {
      statements.delete(connection);
      connection.close();
    }

    _query(connection: BetterSqlite3.Database, obj: QueryObject): Promise<QueryObject> {
      if (!obj.sql) return Promise.reject(new Error('The query is empty'));
      const bindings = this._formatBindings(obj.bindings);
      return retryBusy(() => execute(connection, obj, bindings));
    }
  };

  /** Runs one statement on the calling thread; knex reads `response` (and `context` for writes). */
  function execute(connection: BetterSqlite3.Database, obj: QueryObject, bindings: unknown[]): QueryObject {
    const statement = prepared(connection, obj.sql);
    if (statement.reader) {
      obj.response = statement.all(bindings);
      return obj;
    }
    const result = statement.run(bindings);
    obj.response = result;
    obj.context = { lastID: result.lastInsertRowid, changes: result.changes };
    return obj;
  }
}

/**
 * The read-only client's reads of SQL that is compiled already (TenantScope's query templates):
 * ReadRunner's path without knex's Raw builder and runner, as PostgreSQL's read pipe is
 * (db/connect.ts readPipeOf). Same connection, same end-of-turn grouping, same `query` event.
 */
export function sqliteReadPipe(db: Knex): { rows<Row>(sql: string, bindings: readonly unknown[]): Promise<Row[]> } {
  const client = db.client as unknown as ReaderClient;
  return {
    rows: <Row>(sql: string, bindings: readonly unknown[]) => readAtEndOfTurn(client, { sql, bindings }, (connection, values) => prepared(connection, sql).all(values) as Row[]),
  };
}

/**
 * One read of the reader client: on its shared connection, at the end of this turn (readTurn),
 * announced as knex's `query` event, retried while SQLite is busy, its SQL in any error.
 */
async function readAtEndOfTurn<T>(client: ReaderClient, query: { sql: string; bindings?: readonly unknown[] }, run: (connection: BetterSqlite3.Database, values: unknown[]) => T): Promise<T> {
  const connection = await client.sharedConnection();
  await readTurn();
  client.emit('query', query);
  const values = client._formatBindings(query.bindings as unknown[] | undefined);
  try {
    return await retryBusy(() => run(connection, values));
  } catch (error) {
    if (error instanceof Error) error.message = `${query.sql} - ${error.message}`;
    throw error;
  }
}

let turn: Promise<void> | undefined;

/**
 * Resolves at the end of this turn of the event loop (setImmediate: after the I/O callbacks that
 * issued reads), the same promise for every read issued in the turn. Its continuations run in
 * order before any of them goes on, so the turn's reads execute one after another.
 */
function readTurn(): Promise<void> {
  return (turn ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      turn = undefined;
      resolve();
    })));
}

const statements = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

/**
 * Bound values SQLite would plan with. SQLite plans some statements with the values bound to
 * them, as if they were written in the SQL, and then marks those parameters as expiring the
 * statement when they are bound again: every execution binds them again, and every step then
 * parses and plans the whole statement anew (sqlite3Reprepare), so a kept statement saves
 * nothing. SQLite 3.53 (better-sqlite3 12) does it for a bound LIMIT (`limit ?`, as knex compiles
 * `.limit(n)`: computeLimitRegisters reads it through sqlite3ExprIsInteger); 3.54 (better-sqlite3
 * 13, Node 24) also for a value compared for equality in a statement with an ORDER BY. forge's
 * listing spent ~9 % of a loaded server's CPU in SQLite's parser (docs/performance.md, item 15).
 * `+?` is the same value through unary plus, SQLite's no-op, which SQLite evaluates when the
 * statement runs: the same result, the same affinity rules (a bound parameter has no affinity,
 * nor has `+?`) and the same errors (a LIMIT that is not an integer is a datatype mismatch either
 * way); the plan is made once and still uses the same indexes (the value side of a comparison
 * does not decide that).
 */
const PLANNED_WITH = /\blimit \?|= \?/gi;

/** `sql` with each bound LIMIT and each value compared with `=` evaluated at run time (PLANNED_WITH). */
export function boundValuesAtRunTime(sql: string): string {
  return sql.replace(PLANNED_WITH, (bound) => `${bound.slice(0, -1)}+?`);
}

/** The connection's prepared statement for `sql`, prepared once. */
function prepared(connection: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement {
  let cache = statements.get(connection);
  if (!cache) statements.set(connection, (cache = new Map()));
  let statement = cache.get(sql);
  if (!statement) {
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
    statement = connection.prepare(boundValuesAtRunTime(sql));
    cache.set(sql, statement);
  }
  return statement;
}

interface PoolClient {
  acquireConnection(): Promise<BetterSqlite3.Database>;
  releaseConnection(connection: BetterSqlite3.Database): Promise<unknown>;
  emit(event: 'query', query: { sql: string; bindings: readonly unknown[] }): boolean;
}

/**
 * One write transaction on the writer's own connection (BEGIN IMMEDIATE: the write lock is taken
 * first, retried while another connection holds it), with `work` running plain SQL on it. Commits
 * when `work` resolves, rolls back when it throws. `db` must be a database opened by this client.
 */
export async function sqliteWriteTransaction<T>(db: Knex, work: (sql: SqlRunner) => Promise<T>): Promise<T> {
  const client = db.client as unknown as PoolClient;
  const connection = await client.acquireConnection();
  // knex's `query` event, as for its own statements (bench/statements.ts counts with it).
  const statement = (sql: string, bindings: readonly unknown[] = []) => {
    client.emit('query', { sql, bindings });
    return prepared(connection, sql);
  };
  try {
    await retryBusy(() => statement('BEGIN IMMEDIATE').run());
    try {
      const result = await work({
        all: <Row>(sql: string, bindings: readonly unknown[] = []) => Promise.resolve(statement(sql, bindings).all(bindings) as Row[]),
        run: (sql: string, bindings: readonly unknown[] = []) => {
          statement(sql, bindings).run(bindings);
          return Promise.resolve();
        },
        // Row by row through one prepared statement: no SQL text per row count, nothing to parse.
        insert: (table: string, columns: readonly string[], rows: readonly unknown[][]) => {
          const sql = `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`;
          for (const row of rows) statement(sql, row).run(row);
          return Promise.resolve();
        },
      });
      statement('COMMIT').run();
      return result;
    } catch (error) {
      if (connection.inTransaction) connection.exec('ROLLBACK');
      throw error;
    }
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * Runs `work` now and, while SQLite answers SQLITE_BUSY, again after a growing pause, up to
 * BUSY_BUDGET_MS. The first try is synchronous: the common case costs no extra turn of the loop.
 */
function retryBusy<T>(work: () => T, deadline = Date.now() + BUSY_BUDGET_MS, wait = 1): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) return Promise.reject(error);
  }
  return new Promise((resolve) => setTimeout(resolve, wait)).then(() => retryBusy(work, deadline, Math.min(wait * 2, 50)));
}
