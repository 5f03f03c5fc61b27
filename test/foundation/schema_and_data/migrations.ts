/** Schema details the code relies on for speed, checked on the migrated database itself. */
import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import { testOnEachDatabase, createMigratedDatabase } from '../../helpers/db.js';
import { dialectOf, type Db } from '../../../db/connect.js';
import { MIGRATIONS } from '../../../db/migrate.js';
import { listConnections } from '../../../db/grant_store.js';

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

/** Steps `migration` down and up again: its indexes are `after` around it and `before` in between (absent: no columns). */
async function stepsDownAndUp(t: ExecutionContext, db: Db, migration: string, after: Record<string, string[]>, before: Record<string, string[]>): Promise<void> {
  const [, steps] = MIGRATIONS.find(([name]) => name === migration)!;
  const columnsOf = (columns: string[]) => (columns.length || dialectOf(db) === 'sqlite' ? columns : ['']);
  for (const [name, columns] of Object.entries(after)) t.deepEqual(await indexColumns(db, name), columns, name);
  await steps.down(db);
  for (const [name, columns] of Object.entries(before)) t.deepEqual(await indexColumns(db, name), columnsOf(columns), `${name} before ${migration}`);
  await steps.up(db);
  for (const [name, columns] of Object.entries(after)) t.deepEqual(await indexColumns(db, name), columns, name);
}

testOnEachDatabase('migration 0030 steps down to the indexes before it and up again', async (t, { db }) => {
  await stepsDownAndUp(t, db, '20261130_0030_keyset_listing_indexes', {
    cavalier_quotes_deal_idx: ['deal_id', 'created_at', 'id'], connections_tenant_idx: ['tenant_id', 'created_at', 'id'], people_profiles_tenant_created_idx: ['tenant_id', 'created_at', 'id'],
  }, {
    cavalier_quotes_deal_idx: ['deal_id'], connections_tenant_idx: ['tenant_id', 'created_at'], people_profiles_tenant_created_idx: [],
  });
});

testOnEachDatabase('the console reads a page of a tenant\'s connections in index order, without a sort step', async (t, { db }) => {
  const statements: Array<{ sql: string; bindings: readonly Knex.RawBinding[] }> = [];
  const watch = (query: { sql: string; bindings: readonly Knex.RawBinding[] }) => statements.push(query);
  db.on('query', watch);
  await listConnections(db, 'a-tenant', { limit: 20 });
  await listConnections(db, 'a-tenant', { limit: 20, cursor: { time: Date.now(), id: 'z' } });
  db.off('query', watch);
  t.is(statements.length, 2);
  for (const { sql, bindings } of statements) {
    if (dialectOf(db) === 'sqlite') {
      const plan = (await db.raw(`explain query plan ${sql}`, bindings)) as Array<{ detail: string }>;
      const details = plan.map((step) => step.detail).join('; ');
      t.regex(details, /USING INDEX connections_tenant_idx/);
      t.notRegex(details, /TEMP B-TREE/);
    } else {
      // With full sorts made as costly as they can be, only an index giving the order avoids one.
      await db.transaction(async (trx) => {
        await trx.raw('set local enable_sort = off');
        await trx.raw('set local enable_seqscan = off');
        const plan = JSON.stringify((await trx.raw(`explain (format json) ${sql.replace(/\$\d+/g, '?')}`, bindings)).rows);
        t.regex(plan, /connections_tenant_idx/);
        t.notRegex(plan, /"Node Type":"Sort"/);
      });
    }
  }
});

testOnEachDatabase('migration 0031 steps down to the indexes before it and up again', async (t, { db }) => {
  await stepsDownAndUp(t, db, '20261130_0031_filtered_listing_indexes', {
    cavalier_deals_tenant_stage_idx: ['tenant_id', 'stage', 'created_at', 'id'], people_profiles_tenant_status_idx: ['tenant_id', 'status', 'created_at', 'id'], terrain_runs_workflow_idx: ['workflow_id', 'created_at', 'id'],
  }, {
    cavalier_deals_tenant_stage_idx: ['tenant_id', 'stage'], people_profiles_tenant_status_idx: ['tenant_id', 'status', 'full_name'], terrain_runs_workflow_idx: ['workflow_id'],
  });
});
