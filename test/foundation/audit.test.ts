import test from 'ava';
import fc from 'fast-check';
import { testOnEachDatabase } from '../helpers/db.js';
import { createTenant } from '../../db/accounts.js';
import { EXPORT_COLUMNS, toJsonLine } from '../../db/audit_export.js';
import { appendAudit, canonicalJson, chainRows, recordHash, sha256Hex, verifyChain, redactArguments, type DbAuditRow } from '../../db/audit.js';
import { intactChain } from '../helpers/audit.js';

async function collect(rows: AsyncIterable<DbAuditRow>): Promise<DbAuditRow[]> {
  const out: DbAuditRow[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

testOnEachDatabase('audit records chain per tenant and verify', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  const globex = await createTenant(db, { slug: 'globex', name: 'Globex' });
  for (let i = 0; i < 5; i += 1) {
    await appendAudit(db, { tenantId: acme.id, kind: 'tool', name: 'forge.list_conversations', args: { i }, outcome: 'ok' });
    await appendAudit(db, { tenantId: globex.id, kind: 'tool', name: 'aegis.list_scans', outcome: 'ok' });
  }
  const rows = await collect(chainRows(db, acme.id, 2));
  t.deepEqual(rows.map((r) => r.seq), [1, 2, 3, 4, 5]);
  t.is(rows[1].prev_hash, rows[0].hash);
  t.deepEqual(await verifyChain(rows), intactChain(rows));
  const globexRows = await collect(chainRows(db, globex.id));
  t.is(globexRows.length, 5);
  t.deepEqual(await verifyChain(globexRows), intactChain(globexRows));
});

testOnEachDatabase('a tampered or deleted record is found', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  for (let i = 0; i < 4; i += 1) await appendAudit(db, { tenantId: acme.id, kind: 'tool', name: 'x', outcome: 'ok' });
  await db('audit_log').where({ chain: acme.id, seq: 3 }).update({ outcome: 'forbidden_cross_tenant' });
  const tampered = await verifyChain(chainRows(db, acme.id));
  t.false(tampered.ok);
  t.is(tampered.first_broken?.seq, 3);
  t.is(tampered.first_broken?.reason, 'hash does not match the record');
  await db('audit_log').where({ chain: acme.id, seq: 2 }).delete();
  const gap = await verifyChain(chainRows(db, acme.id));
  t.is(gap.first_broken?.seq, 3);
  t.regex(gap.first_broken!.reason, /expected seq 2/);
});

testOnEachDatabase('concurrent appends in separate transactions keep one unbroken chain', async (t, { db, kind }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  await Promise.all(Array.from({ length: 25 }, (_, i) =>
    db.transaction((trx) => appendAudit(trx, { tenantId: acme.id, kind: 'tool', name: `call ${i}`, outcome: 'ok' }))));
  const rows = await collect(chainRows(db, acme.id));
  t.is(rows.length, 25, kind);
  t.deepEqual(await verifyChain(rows), intactChain(rows), kind);
});

testOnEachDatabase('a rolled-back transaction leaves no audit record and no chain gap', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  await appendAudit(db, { tenantId: acme.id, kind: 'tool', name: 'first', outcome: 'ok' });
  await t.throwsAsync(db.transaction(async (trx) => {
    await appendAudit(trx, { tenantId: acme.id, kind: 'tool', name: 'lost', outcome: 'ok' });
    throw new Error('handler failed');
  }));
  await appendAudit(db, { tenantId: acme.id, kind: 'tool', name: 'second', outcome: 'ok' });
  const rows = await collect(chainRows(db, acme.id));
  t.deepEqual(rows.map((r) => r.name), ['first', 'second']);
  t.true((await verifyChain(rows)).ok);
});

testOnEachDatabase('stored arguments are redacted; the digest covers them whole', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  const a = await appendAudit(db, { tenantId: acme.id, kind: 'admin', name: 'user.add', args: { email: 'e@x', password: 'hunter22', note: 'x'.repeat(500) }, outcome: 'ok' });
  const stored = JSON.parse(a.args_redacted!);
  t.is(stored.password, '[redacted]');
  t.is(stored.note.length, 201);
  const b = await appendAudit(db, { tenantId: acme.id, kind: 'admin', name: 'user.add', args: { note: 'x'.repeat(500), password: 'hunter22', email: 'e@x' }, outcome: 'ok' });
  t.is(a.args_digest, b.args_digest, 'key order does not change the digest');
  t.deepEqual(redactArguments({ api_key: 'k', nested: { token: 't' } }), { api_key: '[redacted]', nested: { token: '[redacted]' } });
});

test('the record hash is sha256(prev_hash + canonical JSON of the hashed fields), as exports are verified', (t) => {
  // The definition docs/console.md gives to anyone verifying an export, written the slow, obvious way.
  const fields = ['id', 'chain', 'seq', 'time', 'tenant_id', 'user_id', 'client_id', 'connection_id', 'product', 'kind', 'name', 'args_digest', 'args_redacted', 'outcome', 'duration_ms', 'request_id'] as const;
  const reference = (row: Omit<DbAuditRow, 'hash'>) => sha256Hex(row.prev_hash + canonicalJson(Object.fromEntries(fields.map((f) => [f, row[f] ?? null]))));
  const text = fc.option(fc.string({ unit: 'binary', maxLength: 80 }), { nil: null });
  const row = fc.record({
    id: fc.uuid(), chain: fc.string({ maxLength: 36 }), seq: fc.nat(), time: fc.nat(), tenant_id: text, user_id: text, client_id: text, connection_id: text,
    product: text, kind: fc.constantFrom('tool', 'resource', 'prompt', 'auth', 'admin' as const), name: fc.string({ unit: 'binary', maxLength: 80 }),
    args_digest: text, args_redacted: text, outcome: fc.string({ maxLength: 20 }), duration_ms: fc.option(fc.oneof(fc.integer(), fc.double()), { nil: null }), request_id: text,
    prev_hash: fc.string({ maxLength: 64 }),
  });
  t.notThrows(() => fc.assert(fc.property(row, (r) => recordHash(r as Omit<DbAuditRow, 'hash'>) === reference(r as Omit<DbAuditRow, 'hash'>)), { numRuns: 2_000 }));
});

test('an export line is exactly JSON.stringify of the record in export column order, whatever the text holds', (t) => {
  const texts = ['plain', 'a "quoted", comma\nline', 'tab\there \\ back', 'ünïcødé ✓ \u2028 \u0000', ''];
  texts.forEach((text, i) => {
    const row = {
      id: `id-${i}`, chain: 'c', seq: i + 1, time: 1_795_000_000_000 + i, tenant_id: 't', user_id: i % 2 ? null : 'u', client_id: text, connection_id: null,
      product: 'forge', kind: 'tool', name: text, args_digest: null, args_redacted: JSON.stringify({ note: text }), outcome: 'ok', duration_ms: i % 2 ? null : 3,
      request_id: text, prev_hash: 'p', hash: 'h', extra_column_not_exported: 'x',
    } as unknown as DbAuditRow;
    const expected = JSON.stringify(Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, row[c] ?? null]))) + '\n';
    t.is(toJsonLine(row), expected);
  });
});

test('an export line equals JSON.stringify for any UTF-16 text, lone surrogates and control characters included', (t) => {
  const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
  const text = fc.oneof(fc.string({ unit: anyCodeUnit, maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constant(null));
  const row = fc.record({
    id: fc.uuid(), chain: text, seq: fc.nat(), time: fc.nat(), tenant_id: text, user_id: text, client_id: text, connection_id: text, product: text,
    kind: text, name: text, args_digest: text, args_redacted: text, outcome: text, duration_ms: fc.option(fc.oneof(fc.integer(), fc.double()), { nil: null }), request_id: text,
    prev_hash: text, hash: text,
  });
  t.notThrows(() => fc.assert(fc.property(row, (r) => {
    const expected = JSON.stringify(Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, r[c] ?? null]))) + '\n';
    return toJsonLine(r as unknown as DbAuditRow) === expected;
  }), { numRuns: 3_000 }));
});
