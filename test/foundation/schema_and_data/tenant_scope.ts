/**
 * TenantScope.select: a query template compiled once and shared by every scope (every tenant)
 * of a dialect must still read only the calling scope's tenant, with the calling scope's values.
 * TenantScope.requireLocked: the caller's record as it is once locked, or the error `require` gives.
 */
import { randomUUID } from 'node:crypto';
import { holdRow, testOnEachDatabase } from '../../helpers/db.js';
import { createTenant } from '../../../db/accounts.js';
import { readerOf } from '../../../db/connect.js';
import { TenantScope, type TemplateValues } from '../../../db/tenant_scope.js';
import { isAppError } from '../../../shared/errors.js';

async function conversations(db: import('knex').Knex, tenantId: string, titles: string[]): Promise<void> {
  await db('forge_conversations').insert(titles.map((title, i) => ({ id: randomUUID(), tenant_id: tenantId, title, created_at: 1_000 + i, updated_at: 1_000 + i })));
}

const newest = (scope: TenantScope, limit: number, before?: number) => {
  const values: TemplateValues = before === undefined ? { limit } : { limit, before };
  return scope.select<{ title: string; updated_at: number | string }>(before === undefined ? 'test.newest' : 'test.newest.before', values, (template, v) => {
    const query = template.from('forge_conversations').select('forge_conversations.title', 'forge_conversations.updated_at');
    if (before !== undefined) query.where('forge_conversations.updated_at', '<', v.before);
    return query.orderBy('forge_conversations.updated_at', 'desc').limit(v.limit as number);
  });
};

testOnEachDatabase('a template compiled for one tenant reads each later tenant\'s own rows with its own values', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  const globex = await createTenant(db, { slug: 'globex', name: 'Globex' });
  await conversations(db, acme.id, ['a1', 'a2', 'a3']);
  await conversations(db, globex.id, ['g1', 'g2']);
  const reads = readerOf(db);

  t.deepEqual((await newest(new TenantScope(reads, acme.id), 2)).map((r) => r.title), ['a3', 'a2']);
  t.deepEqual((await newest(new TenantScope(reads, globex.id), 5)).map((r) => r.title), ['g2', 'g1']);
  t.deepEqual((await newest(new TenantScope(reads, acme.id), 1)).map((r) => r.title), ['a3']);
  t.deepEqual((await newest(new TenantScope(reads, acme.id), 5, 1_002)).map((r) => r.title), ['a2', 'a1'], 'another shape, another template');
  t.deepEqual((await newest(new TenantScope(reads, globex.id), 5, 1_001)).map((r) => r.title), ['g1']);
  t.deepEqual(await newest(new TenantScope(reads, randomUUID()), 5), [], 'a tenant without rows reads none');
  // Inside a transaction (write tools read there) the same template serves.
  await db.transaction(async (trx) => t.deepEqual((await newest(new TenantScope(trx, globex.id), 1)).map((r) => r.title), ['g2']));
});

testOnEachDatabase('a template whose value does not reach the SQL as given, or that is not bound to the tenant, is refused', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  const scope = new TenantScope(db, acme.id);
  const computed = await t.throwsAsync(scope.select('test.computed', { limit: 10 }, (template, v) =>
    template.from('forge_conversations').select('title').limit((v.limit as number) + 1)));
  t.regex(computed!.message, /test\.computed: limit does not reach the SQL as given/);
  const unbound = await t.throwsAsync(scope.select('test.unbound', { limit: 10 }, (template, v) =>
    template.db('forge_conversations').select('title').limit(v.limit as number)));
  t.regex(unbound!.message, /test\.unbound: not bound to the tenant/);
  // Refused on every call, not only the first: nothing was kept.
  await t.throwsAsync(scope.select('test.unbound', { limit: 10 }, (template, v) => template.db('forge_conversations').select('title').limit(v.limit as number)));
});

testOnEachDatabase('requireLocked answers the record as it is once locked: gone meanwhile is not_found, another tenant\'s forbidden_cross_tenant', async (t, { db, kind }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  const globex = await createTenant(db, { slug: 'globex', name: 'Globex' });
  await conversations(db, acme.id, ['kept', 'deleted']);
  await conversations(db, globex.id, ['foreign']);
  const ids = Object.fromEntries((await db('forge_conversations').select('id', 'title')).map((r: { id: string; title: string }) => [r.title, r.id]));
  const codeOf = (error: unknown) => (isAppError(error) ? error.code : String(error));
  await db.transaction(async (trx) => {
    const scope = new TenantScope(trx, acme.id);
    t.is((await scope.requireLocked('forge_conversations', ids.kept.toUpperCase(), 'conversation')).title, 'kept');
    t.is(codeOf(await t.throwsAsync(scope.requireLocked('forge_conversations', ids.foreign, 'conversation'))), 'forbidden_cross_tenant');
    t.is(codeOf(await t.throwsAsync(scope.requireLocked('forge_conversations', randomUUID(), 'conversation'))), 'not_found');
  });
  if (kind !== 'postgres') return;
  // Found, then deleted by a transaction that held the row while this one waited for its lock.
  const held = await holdRow(db, 'forge_conversations', ids.deleted);
  const locked = db.transaction((trx) => new TenantScope(trx, acme.id).requireLocked('forge_conversations', ids.deleted, 'conversation'));
  t.true(await held.waiting(1), 'requireLocked waits for the held row');
  await held.trx('forge_conversations').where({ id: ids.deleted }).delete();
  await held.release();
  t.is(codeOf(await t.throwsAsync(locked)), 'not_found');
});
