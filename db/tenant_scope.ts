/**
 * A TenantScope is the only way product code reaches tenant data: every query it builds is
 * already filtered by the grant's tenant, and every insert is stamped with it (STYLE.md §3).
 * It wraps the call's transaction; the caller (the trust pipeline) owns that transaction.
 */
import type { Knex } from 'knex';
import { AppError } from '../shared/errors.js';
import { dialectOf, readPipeOf, type DbOrTrx } from './connect.js';
import { uuidv7 } from './ids.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Record ids are lowercase UUIDs. Callers (models) send them in many forms: upper case, padded,
 * percent-encoded. They all mean the same record, so they are all checked against the tenant.
 */
export function normaliseId(raw: string): string | undefined {
  let value = raw.trim();
  if (value.includes('%')) {
    try {
      value = decodeURIComponent(value).trim();
    } catch {
      return undefined;
    }
  }
  value = value.toLowerCase();
  return UUID.test(value) ? value : undefined;
}

/** The values a query template takes on each call (TenantScope.select). */
export type TemplateValues = Record<string, string | number>;

interface CompiledTemplate {
  sql: string;
  /** Where each binding comes from: a value by name, the scope's tenant, or a constant of the shape. */
  bindings: Array<{ value: string } | { tenant: true } | { constant: unknown }>;
}

/** Compiled templates by dialect and key: the SQL text of a shape is the same for every connection of a dialect. */
const templates = new Map<string, CompiledTemplate>();
const TENANT_PLACEHOLDER = '\u0000tenant\u0000';
/** Numeric placeholders sit above 2^52 (still safe integers), where no limit or time of a shape does. */
const NUMBER_PLACEHOLDER_BASE = 2 ** 52;

export class TenantScope {
  constructor(readonly db: DbOrTrx, readonly tenantId: string) {}

  /**
   * A read of fixed shape that knex compiles once per dialect and `key`, not on every call: on a
   * hot listing, building and compiling the query was ~10 % of a call's CPU and the largest share
   * of what it allocated (docs/performance.md item 9). `build` gets a scope bound to a
   * placeholder tenant and a placeholder for each of `values`, and must put each value into the
   * query as it was given (compute `limit + 1` before, not inside); everything else in `build`
   * is the shape, fixed for `key`. Every later call runs the compiled SQL with its own values
   * and this scope's tenant. A value that does not reach the SQL as given is a programming
   * error, refused on first use.
   */
  async select<Row>(key: string, values: TemplateValues, build: (scope: TenantScope, values: TemplateValues) => Knex.QueryBuilder): Promise<Row[]> {
    const cacheKey = `${dialectOf(this.db)} ${key}`;
    let template = templates.get(cacheKey);
    if (!template) templates.set(cacheKey, (template = this.compile(key, values, build)));
    const bindings = template.bindings.map((binding) =>
      'value' in binding ? values[binding.value] : 'tenant' in binding ? this.tenantId : binding.constant);
    // Outside a transaction: on the read pipe (the SQL is compiled already).
    const pipe = readPipeOf(this.db);
    if (pipe) return pipe.rows<Row>(template.sql, bindings);
    const result = (await this.db.raw(template.sql, bindings as Knex.RawBinding[])) as Row[] | { rows: Row[] };
    return Array.isArray(result) ? result : result.rows;
  }

  private compile(key: string, values: TemplateValues, build: (scope: TenantScope, values: TemplateValues) => Knex.QueryBuilder): CompiledTemplate {
    const names = Object.keys(values);
    const placeholders = Object.fromEntries(names.map((name, i) => [name, typeof values[name] === 'number' ? NUMBER_PLACEHOLDER_BASE + i : `\u0000${name}\u0000`]));
    const nameOf = new Map<unknown, string>(names.map((name) => [placeholders[name], name]));
    const { sql, bindings } = build(new TenantScope(this.db, TENANT_PLACEHOLDER), placeholders).toSQL();
    const compiled: CompiledTemplate = {
      sql,
      bindings: bindings.map((binding) =>
        binding === TENANT_PLACEHOLDER ? { tenant: true as const } : nameOf.has(binding) ? { value: nameOf.get(binding)! } : { constant: binding }),
    };
    if (!compiled.bindings.some((binding) => 'tenant' in binding)) throw new Error(`query template ${key}: not bound to the tenant`);
    for (const name of names) {
      if (!compiled.bindings.some((binding) => 'value' in binding && binding.value === name)) throw new Error(`query template ${key}: ${name} does not reach the SQL as given`);
    }
    return compiled;
  }

  /** A query on `table` limited to this tenant. */
  from<Row extends object = any>(table: string): Knex.QueryBuilder<Row, Row[]> {
    return this.db<Row>(table).where(`${table}.tenant_id`, this.tenantId) as Knex.QueryBuilder<Row, Row[]>;
  }

  /**
   * Inserts a row stamped with this tenant; returns it with its id. Ids are time-ordered (UUIDv7,
   * db/ids.ts), so rows this process makes in one millisecond still sort in the order they were
   * made: lists ordered by (created_at, id), such as a conversation's messages oldest first, keep
   * that order when two rows share a created_at.
   */
  async insert<Row extends object>(table: string, row: Row): Promise<Row & { id: string; tenant_id: string }> {
    const [stamped] = await this.insertAll(table, [row]);
    return stamped;
  }

  /** Inserts `rows` in one statement, each stamped as `insert` stamps one. */
  async insertAll<Row extends object>(table: string, rows: readonly Row[]): Promise<Array<Row & { id: string; tenant_id: string }>> {
    const stamped = rows.map((row) => ({ ...row, id: (row as { id?: string }).id ?? uuidv7(), tenant_id: this.tenantId }));
    if (stamped.length) await this.db(table).insert(stamped);
    return stamped;
  }

  /**
   * Finds a record by an id the caller supplied. Absent here but present in another tenant →
   * forbidden_cross_tenant (DESIGN.md §3); absent everywhere → not_found. Nothing of the
   * foreign record is returned or described.
   */
  async require<Row extends object = any>(table: string, rawId: string, entity: string): Promise<Row> {
    const id = normaliseId(rawId);
    if (!id) throw new AppError('not_found', `no ${entity} with id "${rawId.slice(0, 80)}"`);
    const row = await this.db(table).where({ id }).first();
    if (!row) throw new AppError('not_found', `no ${entity} with id ${id}`);
    if (row.tenant_id !== this.tenantId) {
      throw new AppError('forbidden_cross_tenant', `the ${entity} belongs to another organization`);
    }
    return row as Row;
  }

  /**
   * Locks one row of this tenant until the transaction ends, against every other writer, including
   * one inserting a row that references it, and returns it as it is now (undefined when it is gone).
   * PostgreSQL: FOR UPDATE, which waits for such an insert (it holds FOR KEY SHARE) or a change to
   * commit, so what the caller reads next is what it will change; SQLite: the one writer holds the
   * whole database already. `share`: FOR SHARE, for a row the caller only relies on (a row its
   * change will reference): it excludes changes to it, yet not the KEY SHARE of another writer's
   * foreign key to it, which that writer may take while it holds a row the caller waits for.
   */
  async lock<Row extends object = any>(table: string, id: string, mode: 'update' | 'share' = 'update'): Promise<Row | undefined> {
    const query = this.from<Row>(table).where(`${table}.id`, id).first();
    if (dialectOf(this.db) !== 'postgres') return (await query) as Row | undefined;
    return (await (mode === 'share' ? query.forShare() : query.forUpdate())) as Row | undefined;
  }

  /**
   * `require`, then `lock`: a record the caller supplied, locked and read as it is now, for a change
   * decided on and computed from what it will replace (`share`: from what it relies on). Deleted by
   * a call that committed while this one waited for the lock → not_found, as it would be a moment later.
   */
  async requireLocked<Row extends object = any>(table: string, rawId: string, entity: string, mode: 'update' | 'share' = 'update'): Promise<Row> {
    const { id } = await this.require<{ id: string }>(table, rawId, entity);
    const row = await this.lock<Row>(table, id, mode);
    if (!row) throw new AppError('not_found', `no ${entity} with id ${id}`);
    return row;
  }

  async update(table: string, id: string, patch: Record<string, unknown>): Promise<number> {
    return this.from(table).where(`${table}.id`, id).update(patch);
  }

  async delete(table: string, id: string): Promise<number> {
    return this.from(table).where(`${table}.id`, id).delete();
  }
}
