/**
 * The PostgreSQL driver: knex's own `pg` dialect, with named prepared statements for repeated SQL.
 *
 * Why: knex sends every query unnamed, so PostgreSQL parses and plans it each time and node-pg
 * sends Parse, Describe and the row description again. A named statement is parsed once per
 * connection; later executions send only Bind and Execute. For forge's listing query that was
 * ~40 % less wall time per query and ~35 % less of Portico's CPU (docs/performance.md item 8).
 *
 * Which statements: single SELECT / INSERT / UPDATE / DELETE / WITH statements whose text has no
 * `*` other than `count(*)`. PostgreSQL refuses to run a prepared statement whose result columns
 * changed ("cached plan must not change result type"), which is what a `select *` becomes when
 * another instance's migration adds a column during a rolling deploy; a statement that names its
 * columns keeps its result type (the plan itself is rebuilt on any DDL). At most `MAX_NAMED`
 * distinct texts are named, process-wide (each becomes one prepared statement on each pooled
 * connection); later ones run unnamed, as before.
 *
 * `DATABASE_PREPARED_STATEMENTS=off` turns it off, for a pooler that does not carry prepared
 * statements across server connections (PgBouncer in transaction mode before 1.21).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { Knex } from 'knex';
import pg from 'pg';

const require = createRequire(import.meta.url);
// knex's dialect classes are CommonJS modules without type declarations.
const KnexPg = require('knex/lib/dialects/postgres/index.js') as new (config: Knex.Config) => PgClient;

interface PgClient {
  _query(connection: unknown, obj: PgQuery): Promise<unknown>;
}

interface KnexPgClient {
  config: { connection: string | pg.ClientConfig; searchPath?: string | string[] };
  positionBindings(sql: string): string;
  emit(event: 'query', query: { sql: string; bindings: readonly unknown[] }): void;
}

interface PgQuery {
  sql?: string;
  options?: Record<string, unknown>;
}

/** Distinct statement texts named per process: bounded, as each is prepared on every pooled connection. */
const MAX_NAMED = 2_000;

/**
 * Texts with more bound parameters run unnamed. Those are lists (`in (?, ?, …)`, a multi-row
 * insert) whose text differs with every length: prepared, each length would stay in the memory
 * of every pooled connection it ran on (~100 KB for 250 parameters) for as long as it lives.
 */
const MAX_NAMED_PARAMETERS = 32;
const PAST_NAMED_PARAMETERS = `$${MAX_NAMED_PARAMETERS + 1}`;

/** How much longer than PostgreSQL's own time-out a connection waits for an answer before it is given up. */
export const STALL_MARGIN_MS = 5_000;

/** How long a pipe waits for a new connection to be ready (as knex waits for a pooled one: acquireConnectionTimeout). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Names statement texts: the same name for the same text on every connection, `undefined` for a
 * text that should run unnamed (not preparable, or past `max` distinct texts).
 */
export function statementNamer(max = MAX_NAMED): (sql: string) => string | undefined {
  const names = new Map<string, string | null>();
  return (sql) => {
    let name = names.get(sql);
    if (name === undefined) {
      // A list's lengths are not remembered either: they would fill the map. Placeholders are
      // numbered in order, so a text holds `$33` exactly when it has more than 32 of them.
      if (sql.includes(PAST_NAMED_PARAMETERS)) return undefined;
      name = names.size < max && preparable(sql) ? `p_${createHash('sha1').update(sql).digest('base64url')}` : null;
      // Texts past the bound are not remembered either: the map stays bounded.
      if (names.size < max) names.set(sql, name);
    }
    return name ?? undefined;
  };
}

const PREPARABLE = /^\s*(select|insert|update|delete|with)\s/i;
/** Statements that change the schema or maintain tables: they may rightly run for minutes. */
const SCHEMA = /^\s*(create|alter|drop|comment|vacuum|analyze|reindex|cluster|truncate)\s/i;

function preparable(sql: string): boolean {
  return PREPARABLE.test(sql) && !sql.includes(';') && !sql.replace(/count\(\*\)/gi, '').includes('*');
}

const statementName = statementNamer();

/**
 * `stallMs`: a pooled connection whose statement has had no answer for this long is given up (see
 * StallWatch): its call fails `unavailable` instead of holding the call and a pool slot for as long
 * as the socket lives. Schema statements are not watched (an index build may rightly take
 * minutes); every other one is, a migration's data statements too, so one that must run longer
 * than `stallMs` belongs in batches. `named: false`
 * (DATABASE_PREPARED_STATEMENTS=off) runs every statement unnamed.
 */
export function pgClient(options: { named: boolean; stallMs?: number }): typeof Knex.Client {
  return class PorticoPg extends KnexPg {
    override async _query(connection: unknown, obj: PgQuery): Promise<unknown> {
      const name = options.named && obj.sql && !obj.options?.name ? statementName(obj.sql) : undefined;
      const query = super._query(connection, name ? { ...obj, options: { ...obj.options, name } } : obj);
      if (!options.stallMs || !obj.sql || SCHEMA.test(obj.sql)) return query;
      return watchOf(connection as pg.Client, options.stallMs).over(query);
    }
  } as unknown as typeof Knex.Client;
}

const watches = new WeakMap<pg.Client, StallWatch>();

/**
 * The watch of a connection, made at its first statement: once its statements have stalled for
 * `stallMs` it calls `then` and ends the connection's socket. pg then fails every statement the
 * connection carries ("Connection terminated"), and knex and the pipes drop it.
 */
function watchOf(client: pg.Client, stallMs: number, then?: (client: pg.Client) => void): StallWatch {
  let watch = watches.get(client);
  if (!watch) {
    watch = new StallWatch(stallMs, () => {
      then?.(client);
      (client as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
      client.end().catch(() => undefined);
    });
    watches.set(client, watch);
  }
  return watch;
}

/**
 * One connection in pg's `pipeline` mode (pg 8.23): a statement is written at once, without
 * waiting for the answers to the statements before it, and PostgreSQL runs them one after
 * another. Each keeps its own Sync, so a failing statement fails alone. Two serve each database
 * (db/connect.ts):
 * - **reads** outside transactions (TenantScope.select's templates): with `oneWritePerTurn` the
 *   socket is corked until the end of the event-loop turn, so the turn's reads leave in one write
 *   and wake one backend (like SQLite's readTurn), and no read takes a pooled connection. Reads
 *   queue behind each other, so only quick reads (indexed templates) belong here.
 * - **audit batches** (db/audit.ts AuditWriter): a batch on known heads is written while the
 *   one before it is still committing, and runs as soon as that one has.
 * A broken connection fails what it carries (unavailable) and the next statement opens another.
 * PostgreSQL may still run and commit what it was sent: a backend waiting for a lock does not
 * notice its client leaving (db/audit.ts writes such records again under the same ids).
 */
export class PgPipe {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private held = false;
  private closed = false;
  private readonly statements = new Map<string, { text: string; name?: string }>();
  private readonly stallMs: number;

  /**
   * `named`: repeated texts run as prepared statements, as on the pool (off with
   * DATABASE_PREPARED_STATEMENTS=off). `statementTimeoutMs`: PostgreSQL cancels a statement that
   * runs longer (its `statement_timeout` on this connection), so one stuck statement cannot hold
   * the statements written behind it for ever.
   */
  constructor(private readonly db: Knex, private readonly options: { named: boolean; oneWritePerTurn: boolean; statementTimeoutMs?: number; lockTimeoutMs?: number }) {
    // A statement unanswered past PostgreSQL's own limit (and a margin) gives the connection up.
    this.stallMs = (options.statementTimeoutMs ?? options.lockTimeoutMs ?? 60_000) + STALL_MARGIN_MS;
  }

  /** The rows of one statement with knex's `?` placeholders. */
  async rows<Row>(sql: string, bindings: readonly unknown[]): Promise<Row[]> {
    const client = this.client ?? (await (this.connecting ??= this.connect()));
    if (this.options.oneWritePerTurn) this.holdWrites(client);
    const knexClient = this.db.client as unknown as KnexPgClient;
    knexClient.emit('query', { sql, bindings });
    const { text, name } = this.statement(knexClient, sql);
    // started/answered around the await, not over(): one promise fewer on the hot path.
    const watch = this.watched(client);
    watch.started();
    try {
      const result = await client.query({ text, values: bindings as unknown[], name });
      return result.rows as Row[];
    } finally {
      watch.answered();
    }
  }

  /**
   * The pipe's statements run one after another, so one that is never answered (a database host
   * frozen or gone, a flow a NAT or firewall dropped: no FIN, no RST, and the server-side time-outs
   * never run) would hold every statement written behind it, on every later call, for as long as
   * the socket lives (for ever, when the peer's TCP still answers). A watchdog per connection:
   * while statements are in flight and none has been answered for longer than PostgreSQL itself
   * would have let the slowest run (its statement or lock time-out, plus a margin), the connection
   * is given up. What it carries fails as `unavailable` and the next statement opens another.
   */
  private watched(client: pg.Client): StallWatch {
    return watchOf(client, this.stallMs, this.forget);
  }

  /** A connection given up is not handed out again, even before pg reports its end. */
  private readonly forget = (client: pg.Client) => {
    if (this.client === client) this.client = undefined;
  };

  /** `sql` with `$n` placeholders, and its prepared statement's name: worked out once per text (the pipes carry a few constant texts). */
  private statement(knexClient: KnexPgClient, sql: string): { text: string; name?: string } {
    let statement = this.statements.get(sql);
    if (!statement) {
      const text = knexClient.positionBindings(sql);
      statement = { text, name: this.options.named ? statementName(text) : undefined };
      if (this.statements.size < MAX_NAMED) this.statements.set(sql, statement);
    }
    return statement;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<pg.Client> {
    // Opening is bounded too: a host that stopped answering (frozen, or gone behind a proxy that
    // still accepts connections) answers the new connection no more than the old one, and the
    // statements waiting for it (and close()) would wait for ever, after the database is back.
    const client = sessionClient(this.db, { pipeline: true, connectionTimeoutMillis: CONNECT_TIMEOUT_MS } as pg.ClientConfig);
    // A broken connection fails the reads in flight (unavailable); the next read opens another.
    const drop = () => {
      if (this.client === client) this.client = undefined;
    };
    client.on('error', drop);
    client.on('end', drop);
    try {
      if (this.closed) throw new Error('Client was closed and is not queryable');
      await client.connect();
      // The session's settings are statements like any other: watched.
      await this.watched(client).over((async () => {
        await useSearchPath(client, this.db);
        if (this.options.statementTimeoutMs) await client.query(`set statement_timeout = ${Math.floor(this.options.statementTimeoutMs)}`);
        if (this.options.lockTimeoutMs) await client.query(`set lock_timeout = ${Math.floor(this.options.lockTimeoutMs)}`);
      })());
      this.client = client;
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    } finally {
      this.connecting = undefined;
    }
  }

  private holdWrites(client: pg.Client): void {
    if (this.held) return;
    const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
    socket.cork();
    this.held = true;
    setImmediate(() => {
      this.held = false;
      socket.uncork();
    });
  }
}

/** Gives up (once) when statements are in flight and none has been answered for `stallMs`. */
class StallWatch {
  private inflight = 0;
  private progressAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private gaveUp = false;

  constructor(private readonly stallMs: number, private readonly giveUp: () => void) {}

  /** `work` (statements just written on the connection), watched until it settles. */
  async over<T>(work: Promise<T>): Promise<T> {
    this.started();
    try {
      return await work;
    } finally {
      this.answered();
    }
  }

  started(): void {
    if (this.inflight++ === 0) this.progressAt = performance.now();
    if (!this.timer && !this.gaveUp) this.arm(this.stallMs);
  }

  answered(): void {
    this.inflight -= 1;
    this.progressAt = performance.now();
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.inflight || this.gaveUp) return;
      const waited = performance.now() - this.progressAt;
      if (waited < this.stallMs) return this.arm(this.stallMs - waited);
      this.gaveUp = true;
      this.giveUp();
    }, ms);
    this.timer.unref();
  }
}

/** A pg client of its own (not pooled, not yet connected) on the database `db` is configured for. */
export function sessionClient(db: Knex, extra: Partial<pg.ClientConfig> = {}): pg.Client {
  const { connection } = (db.client as unknown as KnexPgClient).config;
  return new pg.Client({ ...(typeof connection === 'string' ? { connectionString: connection } : connection), ...extra });
}

/** Gives a connected session of sessionClient the search path `db`'s own connections have. */
export async function useSearchPath(client: pg.Client, db: Knex): Promise<void> {
  const { searchPath } = (db.client as unknown as KnexPgClient).config;
  const schemas = searchPath === undefined ? [] : [searchPath].flat();
  if (schemas.length) await client.query(`set search_path to ${schemas.map((schema) => client.escapeIdentifier(schema)).join(', ')}`);
}
