/** Schema details the code relies on for speed, checked on the migrated database itself. */
import test from 'ava';
import { testOnEachDatabase, createMigratedDatabase } from '../helpers/db.js';
import { dialectOf, type Db } from '../../db/connect.js';
import { MIGRATIONS } from '../../db/migrate.js';

async function indexColumns(db: Db, name: string): Promise<string[]> {
  if (dialectOf(db) === 'sqlite') return (await db.raw(`pragma index_info('${name}')`) as Array<{ name: string }>).map((c) => c.name);
  const result = await db.raw('select indexdef from pg_indexes where indexname = ? and schemaname = current_schema()', [name]);
  const definition = String(result.rows[0]?.indexdef ?? '');
  return (/\(([^)]*)\)\s*$/.exec(definition)?.[1] ?? '').split(',').map((c) => c.trim().replace(/"/g, ''));
}

testOnEachDatabase('forge keyset listings have indexes ending in id, and the migrations step down and up again', async (t, { db }) => {
  const expected: Record<string, string[]> = {
    forge_conversations_tenant_created_idx: ['tenant_id', 'created_at', 'id'],
    forge_messages_conversation_idx: ['conversation_id', 'created_at', 'id'],
    forge_content_tenant_created_idx: ['tenant_id', 'created_at', 'id'],
  };
  for (const [name, columns] of Object.entries(expected)) t.deepEqual(await indexColumns(db, name), columns, name);
  const [, keyset] = MIGRATIONS.find(([name]) => name === '20261122_0017_forge_keyset_indexes')!;
  const [, created] = MIGRATIONS.find(([name]) => name === '20261127_0027_forge_conversations_created_idx')!;
  await created.down(db);
  t.deepEqual(await indexColumns(db, 'forge_conversations_tenant_updated_idx'), ['tenant_id', 'updated_at', 'id']);
  t.deepEqual(await indexColumns(db, 'forge_conversations_tenant_created_idx'), dialectOf(db) === 'sqlite' ? [] : ['']);
  await keyset.down(db);
  t.deepEqual(await indexColumns(db, 'forge_conversations_tenant_updated_idx'), ['tenant_id', 'updated_at']);
  await keyset.up(db);
  await created.up(db);
  for (const [name, columns] of Object.entries(expected)) t.deepEqual(await indexColumns(db, name), columns, name);
});

test('SQLite reads a page of forge conversations in index order, without a sort step', async (t) => {
  const { db, drop } = await createMigratedDatabase('sqlite');
  try {
    const plan = (await db.raw(
      'explain query plan select * from forge_conversations where forge_conversations.tenant_id = ? order by forge_conversations.created_at desc, forge_conversations.id desc limit 11',
      ['t'],
    )) as Array<{ detail: string }>;
    const details = plan.map((step) => step.detail).join('; ');
    t.regex(details, /USING INDEX forge_conversations_tenant_created_idx/);
    t.notRegex(details, /TEMP B-TREE/);
  } finally {
    await drop();
  }
});

testOnEachDatabase('terrain workflow names become unique whatever their case: names stored twice in different case are renamed, the oldest kept', async (t, { db }) => {
  const [, nameKey] = MIGRATIONS.find(([name]) => name === '20261127_0028_terrain_workflow_name_key')!;
  await nameKey.down(db);
  const tenants = [{ id: '00000000-0000-4000-8000-00000000000a', slug: 'a', name: 'A', created_at: 1 }, { id: '00000000-0000-4000-8000-00000000000b', slug: 'b', name: 'B', created_at: 1 }];
  await db('tenants').insert(tenants);
  const workflow = (n: number, tenant: string, name: string) => ({ id: `00000000-0000-4000-8000-00000000010${n}`, tenant_id: tenant, name, step_count: 1, created_at: 100 + n });
  const [a, b] = tenants.map((tenant) => tenant.id);
  await db('terrain_workflows').insert([
    workflow(1, a, 'Site survey'), workflow(2, a, 'SITE SURVEY'), workflow(3, a, 'site survey (2)'), workflow(4, a, 'Site Survey'), workflow(5, b, 'site survey'),
  ]);
  await nameKey.up(db);
  const rows = await db('terrain_workflows').orderBy('id').select('name', 'name_key');
  t.deepEqual(rows.map((r) => [r.name, r.name_key]), [
    ['Site survey', 'site survey'],
    ['SITE SURVEY (3)', 'site survey (3)'],
    ['site survey (2)', 'site survey (2)'],
    ['Site Survey (4)', 'site survey (4)'],
    ['site survey', 'site survey'],
  ]);
  const insert = (row: object) => db('terrain_workflows').insert(row).then(() => 'inserted', () => 'refused');
  t.is(await insert({ ...workflow(6, a, 'Site SURVEY (4)'), name_key: 'site survey (4)' }), 'refused', 'the key is unique in the tenant');
  t.is(await insert({ ...workflow(7, b, 'Site SURVEY (4)'), name_key: 'site survey (4)' }), 'inserted', 'another tenant has its own names');
});
