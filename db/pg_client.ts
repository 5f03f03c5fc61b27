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
import type { Knex } from 'knex';

const require = createRequire(import.meta.url);
// knex's dialect classes are CommonJS modules without type declarations.
const KnexPg = require('knex/lib/dialects/postgres/index.js') as new (config: Knex.Config) => PgClient;

interface PgClient {
  _query(connection: unknown, obj: PgQuery): Promise<unknown>;
}

interface PgQuery {
  sql?: string;
  options?: Record<string, unknown>;
}

/** Distinct statement texts named per process: bounded, as each is prepared on every pooled connection. */
export const MAX_NAMED = 2_000;

/**
 * Names statement texts: the same name for the same text on every connection, `undefined` for a
 * text that should run unnamed (not preparable, or past `max` distinct texts).
 */
export function statementNamer(max = MAX_NAMED): (sql: string) => string | undefined {
  const names = new Map<string, string | null>();
  return (sql) => {
    let name = names.get(sql);
    if (name === undefined) {
      name = names.size < max && preparable(sql) ? `p_${createHash('sha1').update(sql).digest('base64url')}` : null;
      // Texts past the bound are not remembered either: the map stays bounded.
      if (names.size < max) names.set(sql, name);
    }
    return name ?? undefined;
  };
}

const PREPARABLE = /^\s*(select|insert|update|delete|with)\s/i;

function preparable(sql: string): boolean {
  return PREPARABLE.test(sql) && !sql.includes(';') && !sql.replace(/count\(\*\)/gi, '').includes('*');
}

const statementName = statementNamer();

export function pgClient(): typeof Knex.Client {
  return class PorticoPg extends KnexPg {
    override _query(connection: unknown, obj: PgQuery): Promise<unknown> {
      const name = obj.sql && !obj.options?.name ? statementName(obj.sql) : undefined;
      return super._query(connection, name ? { ...obj, options: { ...obj.options, name } } : obj);
    }
  } as unknown as typeof Knex.Client;
}

interface PooledClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  query(connection: unknown, query: { sql: string; bindings: readonly unknown[]; method: 'raw' }): Promise<{ response: { rows: unknown[] } }>;
}

/**
 * The rows of one compiled statement (`?` placeholders), run on a pooled connection without
 * knex's query builder and runner: for TenantScope.select's templates, whose SQL is already
 * compiled. knex's own `query` still numbers the placeholders, names the statement (`_query`
 * above), emits the `query` event and wraps an error with its SQL, as for any statement; the
 * pool's acquire time-out applies as before. Outside transactions only. Side by side, 1.048 /
 * 1.07× a tools/call on PostgreSQL at c=10 / c=50 (docs/performance.md item 10).
 */
export async function pooledRows<Row>(db: Knex, sql: string, bindings: readonly unknown[]): Promise<Row[]> {
  const client = db.client as unknown as PooledClient;
  const connection = await client.acquireConnection();
  try {
    return (await client.query(connection, { sql, bindings, method: 'raw' })).response.rows as Row[];
  } finally {
    await client.releaseConnection(connection);
  }
}
