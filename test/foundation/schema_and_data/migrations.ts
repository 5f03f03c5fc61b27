/** Schema details the code relies on for speed, checked on the migrated database itself. */
import test from 'ava';
import { testOnEachDatabase, createMigratedDatabase } from '../../helpers/db.js';
import { dialectOf, type Db } from '../../../db/connect.js';
import { MIGRATIONS } from '../../../db/migrate.js';

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
  const [, created] = MIGRATIONS.find(([name]) => name === '20261127_0026_forge_conversations_created_idx')!;
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
