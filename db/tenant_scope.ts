/**
 * A TenantScope is the only way product code reaches tenant data: every query it builds is
 * already filtered by the grant's tenant, and every insert is stamped with it (STYLE.md §3).
 * It wraps the call's transaction; the caller (the trust pipeline) owns that transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AppError } from '../shared/errors.js';
import type { DbOrTrx } from './connect.js';

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

export class TenantScope {
  constructor(readonly db: DbOrTrx, readonly tenantId: string) {}

  /** A query on `table` limited to this tenant. */
  from<Row extends object = any>(table: string): Knex.QueryBuilder<Row, Row[]> {
    return this.db<Row>(table).where(`${table}.tenant_id`, this.tenantId) as Knex.QueryBuilder<Row, Row[]>;
  }

  /** Inserts rows stamped with this tenant; returns them with their ids. */
  async insert<Row extends object>(table: string, row: Row): Promise<Row & { id: string; tenant_id: string }> {
    const stamped = { ...row, id: (row as { id?: string }).id ?? randomUUID(), tenant_id: this.tenantId };
    await this.db(table).insert(stamped);
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

  async update(table: string, id: string, patch: Record<string, unknown>): Promise<number> {
    return this.from(table).where(`${table}.id`, id).update(patch);
  }

  async delete(table: string, id: string): Promise<number> {
    return this.from(table).where(`${table}.id`, id).delete();
  }
}
