import type { Knex } from 'knex';
import { rewriteKeys } from './20261128_0028_pawvault_vaccine_folded_key.js';

/** foldedKey of mcp/products/common.ts as it is at this migration: a migration keeps its own copy. */
const foldedKey = (text: string) => text.toLowerCase().replaceAll('\u03c2', '\u03c3').replaceAll('i\u0307', 'i');

/** nameKey of mcp/products/common.ts as it is at this migration: NFC, white space made one space, trimmed, then foldedKey. */
const nameKey = (name: string) => foldedKey(name.normalize('NFC').replace(/\s+/g, ' ').trim());

/** The keys before this migration: terrain's (0027) folded the name alone, pawvault's (0028) collapsed its spacing first. */
const workflowKey0027 = foldedKey;
const vaccineKey0028 = (vaccine: string) => foldedKey(vaccine.trim().replace(/\s+/g, ' '));

/**
 * Every product now compares names one way (nameKey): case, spacing and Unicode composition do not
 * make another name. Names are stored that way from now on (nameArg); the keys of the names
 * already stored are written here.
 *
 * - terrain_workflows.name_key was the name case-folded alone, so "Site  survey" (two spaces) or
 *   an accent sent as a combining mark was another workflow than "Site survey". Names that now
 *   share a key keep the oldest workflow as it is and rename the later ones "<name> (2)", "(3)"...
 *   as 0027 did.
 * - reclaim_policies had a unique index on the name as spelled, so "Orders" and "orders" were two
 *   policies. It gets a name_key, unique in the tenant instead of the name, with duplicates renamed
 *   the same way. text: the folded name can be longer than the name ('İ' becomes two characters).
 * - pawvault_vaccinations.vaccine_key adds Unicode composition to its spacing and case (0028); the
 *   key is not unique (every dose has one), so nothing is renamed.
 */
export async function up(knex: Knex): Promise<void> {
  await uniqueKeys(knex, 'terrain_workflows', 200);
  await knex.schema.alterTable('reclaim_policies', (t) => {
    t.text('name_key');
  });
  await uniqueKeys(knex, 'reclaim_policies', 120);
  await knex.schema.alterTable('reclaim_policies', (t) => {
    t.dropUnique(['tenant_id', 'name'], 'reclaim_policies_tenant_name_unique');
    t.unique(['tenant_id', 'name_key'], { indexName: 'reclaim_policies_tenant_name_key_unique' });
  });
  await rewriteKeys(knex, nameKey);
}

/** Renamed duplicates keep their new names: they are distinct as spelled and as 0027 folded them. */
export async function down(knex: Knex): Promise<void> {
  await rewriteKeys(knex, vaccineKey0028);
  await knex.schema.alterTable('reclaim_policies', (t) => {
    t.dropUnique(['tenant_id', 'name_key'], 'reclaim_policies_tenant_name_key_unique');
    t.unique(['tenant_id', 'name'], { indexName: 'reclaim_policies_tenant_name_unique' });
  });
  await knex.schema.alterTable('reclaim_policies', (t) => {
    t.dropColumn('name_key');
  });
  const workflows = (await knex('terrain_workflows').select('id', 'name')) as Array<{ id: string; name: string }>;
  for (const row of workflows) await knex('terrain_workflows').where({ id: row.id }).update({ name_key: workflowKey0027(row.name) });
}

/**
 * Writes nameKey(name) to `table`.name_key, oldest row first: a row whose key an older row of its
 * tenant holds is renamed "<name> (n)", the lowest n whose key no row holds, within `nameMax`.
 * The keys that change are cleared first: a key an older row now takes may still be stored on the
 * later row being renamed (terrain's index on name_key holds throughout).
 */
async function uniqueKeys(knex: Knex, table: string, nameMax: number): Promise<void> {
  const rows = (await knex(table).select('id', 'tenant_id', 'name', 'name_key').orderBy([{ column: 'created_at' }, { column: 'id' }])) as
    Array<{ id: string; tenant_id: string; name: string; name_key: string | null }>;
  const inTenant = (row: { tenant_id: string }, name: string) => `${row.tenant_id} ${nameKey(name)}`;
  const taken = new Set(rows.map((row) => inTenant(row, row.name)));
  const kept = new Set<string>();
  const changes: Array<{ id: string; name: string; name_key: string }> = [];
  for (const row of rows) {
    let name = row.name;
    if (kept.has(inTenant(row, name))) {
      for (let n = 2; taken.has(inTenant(row, name)); n += 1) name = `${cut(row.name, nameMax - ` (${n})`.length)} (${n})`;
      taken.add(inTenant(row, name));
    }
    kept.add(inTenant(row, name));
    if (name !== row.name || nameKey(name) !== row.name_key) changes.push({ id: row.id, name, name_key: nameKey(name) });
  }
  for (const change of changes) await knex(table).where({ id: change.id }).update({ name_key: null });
  for (const { id, ...change } of changes) await knex(table).where({ id }).update(change);
}

/** The first `length` UTF-16 code units of `text`, without half of a surrogate pair at the end. */
function cut(text: string, length: number): string {
  const start = text.slice(0, length);
  return /[\uD800-\uDBFF]$/.test(start) ? start.slice(0, -1) : start;
}
