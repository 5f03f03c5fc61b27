import type { Knex } from 'knex';

const NAME_MAX = 200;

/** foldedKey of mcp/products/common.ts as it is at this migration: a migration keeps its own copy. */
const foldedKey = (text: string) => text.toLowerCase().replaceAll('\u03c2', '\u03c3').replaceAll('i\u0307', 'i');

/**
 * terrain_workflows.name_key: the workflow's name case-folded (foldedKey), unique in the tenant
 * instead of the name as spelled, so "Site survey" and "site survey" are one name, also when two
 * creates race. A name already stored twice in different case keeps its oldest workflow; each
 * later one is renamed "<name> (2)", "(3)"... so the index can be built. text: the folded name
 * can be longer than the name ('İ' becomes two characters).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('terrain_workflows', (t) => {
    t.text('name_key');
  });
  const rows = (await knex('terrain_workflows').select('id', 'tenant_id', 'name').orderBy([{ column: 'created_at' }, { column: 'id' }])) as Array<{ id: string; tenant_id: string; name: string }>;
  const taken = new Set(rows.map((row) => `${row.tenant_id} ${foldedKey(row.name)}`));
  const kept = new Set<string>();
  for (const row of rows) {
    let name = row.name;
    if (kept.has(`${row.tenant_id} ${foldedKey(name)}`)) {
      for (let n = 2; taken.has(`${row.tenant_id} ${foldedKey(name)}`); n += 1) name = `${row.name.slice(0, NAME_MAX - ` (${n})`.length)} (${n})`;
      taken.add(`${row.tenant_id} ${foldedKey(name)}`);
    }
    kept.add(`${row.tenant_id} ${foldedKey(name)}`);
    await knex('terrain_workflows').where({ id: row.id }).update({ name, name_key: foldedKey(name) });
  }
  await knex.schema.alterTable('terrain_workflows', (t) => {
    t.dropUnique(['tenant_id', 'name'], 'terrain_workflows_tenant_name_unique');
    t.unique(['tenant_id', 'name_key'], { indexName: 'terrain_workflows_tenant_name_key_unique' });
  });
}

/** Renamed duplicates keep their new names: the unique index on the name as spelled holds for them. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('terrain_workflows', (t) => {
    t.dropUnique(['tenant_id', 'name_key'], 'terrain_workflows_tenant_name_key_unique');
    t.unique(['tenant_id', 'name'], { indexName: 'terrain_workflows_tenant_name_unique' });
  });
  await knex.schema.alterTable('terrain_workflows', (t) => {
    t.dropColumn('name_key');
  });
}
