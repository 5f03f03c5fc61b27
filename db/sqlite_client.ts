/**
 * The embedded SQLite driver: better-sqlite3 through knex's own dialect for it, with two changes.
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
 */
import { createRequire } from 'node:module';
import type { Knex } from 'knex';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
// knex's dialect classes are CommonJS modules without type declarations.
const KnexBetterSqlite3 = require('knex/lib/dialects/better-sqlite3/index.js') as new (config: Knex.Config) => KnexClient;
const Database = require('better-sqlite3') as typeof BetterSqlite3;

interface KnexClient {
  connectionSettings: { filename: string };
  _formatBindings(bindings: unknown[] | undefined): unknown[];
}

interface QueryObject {
  sql: string;
  bindings?: unknown[];
  response?: unknown;
  context?: { lastID: number | bigint; changes: number };
}

/** What SQLite's busy_timeout would wait, in total, before a statement fails as unavailable. */
const BUSY_BUDGET_MS = 5_000;
const MAX_CACHED_STATEMENTS = 256;

export interface SqliteOptions {
  /** Statements run once per new connection (journal mode, foreign keys, query_only …). */
  pragmas: string[];
}

/** A knex client class for one SQLite file; pass it as knex's `client`. */
export function sqliteClient({ pragmas }: SqliteOptions): new (config: Knex.Config) => object {
  const statements = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

  return class PorticoSqlite extends KnexBetterSqlite3 {
    async acquireRawConnection(): Promise<BetterSqlite3.Database> {
      const connection = new Database(this.connectionSettings.filename, { timeout: 0 });
      try {
        for (const pragma of pragmas) await retryBusy(() => connection.pragma(pragma));
      } catch (error) {
        connection.close();
        throw error;
      }
      statements.set(connection, new Map());
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
    const cache = statements.get(connection)!;
    let statement = cache.get(obj.sql);
    if (!statement) {
      if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
      statement = connection.prepare(obj.sql);
      cache.set(obj.sql, statement);
    }
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
