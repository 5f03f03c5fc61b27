import { GENESIS_HASH, recordHash, sha256Hex, type AuditVerification, type DbAuditRow } from '../../db/audit.js';
import type { Db } from '../../db/connect.js';

/** What verifyChain answers for the intact chain `rows`: every record checked, ending at the last. */
export function intactChain(rows: readonly DbAuditRow[]): AuditVerification {
  const last = rows.at(-1);
  return last ? { ok: true, checked: rows.length, end: { seq: last.seq, hash: last.hash } } : { ok: true, checked: 0 };
}

/** Writes `count` chained records for a tenant in large batches (appendAudit one by one would take minutes). */
export async function bulkChain(db: Db, tenantId: string, count: number, products = ['forge', 'aegis', 'cavalier']): Promise<void> {
  const head = await db('audit_heads').where({ chain: tenantId }).first();
  let prev: string = head?.hash ?? GENESIS_HASH;
  let seq: number = head?.seq ?? 0;
  const start = Date.now() - count * 1000;
  const batchSize = 500;
  for (let offset = 0; offset < count; offset += batchSize) {
    const rows: DbAuditRow[] = [];
    for (let i = offset; i < Math.min(count, offset + batchSize); i += 1) {
      seq += 1;
      const partial = {
        id: `${tenantId.slice(0, 8)}-0000-4000-8000-${String(seq).padStart(12, '0')}`, chain: tenantId, seq, time: start + i * 1000, tenant_id: tenantId,
        user_id: null, client_id: 'bulk-client', connection_id: null, product: products[i % products.length], kind: 'tool' as const,
        name: `${products[i % products.length]}.list_things`, args_digest: sha256Hex(String(i)), args_redacted: JSON.stringify({ page: i, note: 'a "quoted", comma\nline' }),
        outcome: i % 10 === 0 ? 'insufficient_scope' : 'ok', duration_ms: i % 7, request_id: `req-${i}`, prev_hash: prev,
      };
      const row = { ...partial, hash: recordHash(partial) };
      rows.push(row);
      prev = row.hash;
    }
    await db('audit_log').insert(rows);
  }
  await db('audit_heads').insert({ chain: tenantId, seq, hash: prev }).onConflict('chain').merge();
}
