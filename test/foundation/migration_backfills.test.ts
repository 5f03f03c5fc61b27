/** Migrations that fill a new column or table from the rows already there, run on a database holding such rows. */
import { randomUUID } from 'node:crypto';
import { testOnEachDatabase } from '../helpers/db.js';
import type { Db } from '../../db/connect.js';
import { MIGRATIONS } from '../../db/migrate.js';

function migration(name: string) {
  return MIGRATIONS.find(([entry]) => entry === name)![1];
}

async function tenant(db: Db): Promise<string> {
  const id = randomUUID();
  await db('tenants').insert({ id, slug: `t-${id.slice(0, 8)}`, name: 'Backfill', created_at: Date.now() });
  return id;
}

testOnEachDatabase('0024 stores each dose\'s vaccine_key, the name as pawvault compares it', async (t, { db }) => {
  const step = migration('20261126_0024_pawvault_vaccine_key');
  await step.down(db);
  const tenantId = await tenant(db);
  const petId = randomUUID();
  await db('pawvault_pets').insert({ id: petId, tenant_id: tenantId, name: 'Rex', species: 'dog', created_at: 1, updated_at: 1 });
  const dose = (vaccine: string) => ({ id: randomUUID(), tenant_id: tenantId, pet_id: petId, vaccine, administered_on: 0, due_on: null, created_at: 1 });
  await db('pawvault_vaccinations').insert([dose(' Kennel   COUGH '), dose('Rabies')]);
  await step.up(db);
  const keys = (await db('pawvault_vaccinations').where({ pet_id: petId }).orderBy('vaccine_key')).map((row: { vaccine_key: string }) => row.vaccine_key);
  t.deepEqual(keys, ['kennel cough', 'rabies']);
});

testOnEachDatabase('0025 gives each existing recovery policy its retention, in force from its first snapshot', async (t, { db }) => {
  const step = migration('20261126_0025_reclaim_retention_segments');
  await step.down(db);
  const tenantId = await tenant(db);
  const policyId = randomUUID();
  await db('reclaim_policies').insert({
    id: policyId, tenant_id: tenantId, name: 'Orders', target_kind: 'database', target_name: 'orders-db', retention_days: 14, rpo_minutes: 60,
    status: 'active', created_by: null, created_at: 5_000, updated_at: 5_000,
  });
  const segment = (starts_at: number, ends_at: number | null) => ({ id: randomUUID(), tenant_id: tenantId, policy_id: policyId, starts_at, ends_at, rpo_minutes: 60 });
  await db('reclaim_schedule_segments').insert([segment(3_000, 4_000), segment(1_000, 2_000), segment(4_000, null)]);
  await step.up(db);
  const rows = await db('reclaim_retention_segments').where({ policy_id: policyId });
  t.is(rows.length, 1);
  t.like(rows[0], { tenant_id: tenantId, ends_at: null, retention_days: 14 });
  t.is(Number(rows[0].starts_at), 1_000);
});

testOnEachDatabase('0027 stores each workflow\'s name_key and renames a name stored twice in different case, the oldest kept', async (t, { db }) => {
  const step = migration('20261127_0027_terrain_workflow_name_key');
  await step.down(db);
  const [a, b] = [await tenant(db), await tenant(db)];
  const workflow = (n: number, tenantId: string, name: string) => ({ id: `00000000-0000-4000-8000-00000000010${n}`, tenant_id: tenantId, name, step_count: 1, created_at: 100 + n });
  await db('terrain_workflows').insert([
    workflow(1, a, 'Site survey'), workflow(2, a, 'SITE SURVEY'), workflow(3, a, 'site survey (2)'), workflow(4, a, 'Site Survey'), workflow(5, b, 'site survey'),
  ]);
  await step.up(db);
  const rows = await db('terrain_workflows').orderBy('id').select('name', 'name_key');
  t.deepEqual(rows.map((r: { name: string; name_key: string }) => [r.name, r.name_key]), [
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

testOnEachDatabase('0028 recomputes each dose\'s vaccine_key with foldedKey, so doses spelled alike whatever their case share one key', async (t, { db }) => {
  const step = migration('20261128_0028_pawvault_vaccine_folded_key');
  const tenantId = await tenant(db);
  const petId = randomUUID();
  await db('pawvault_pets').insert({ id: petId, tenant_id: tenantId, name: 'Rex', species: 'dog', created_at: 1, updated_at: 1 });
  // Keys as 0024's rule wrote them: spacing collapsed, lower-cased, 'İ' and a final sigma kept apart.
  const dose = (n: number, vaccine: string, vaccine_key: string) => ({
    id: `00000000-0000-4000-8000-00000000020${n}`, tenant_id: tenantId, pet_id: petId, vaccine, vaccine_key, administered_on: n, due_on: null, created_at: 1,
  });
  const before = [
    dose(1, 'İmovax  Rabies', 'i\u0307movax rabies'), dose(2, 'imovax rabies', 'imovax rabies'),
    dose(3, 'ΛΥΣΣΑΣ', 'λυσσας'), dose(4, 'λυσσασ', 'λυσσασ'), dose(5, ' Kennel   COUGH ', 'kennel cough'),
  ];
  await step.down(db);
  await db('pawvault_vaccinations').insert(before);
  const keys = async () => (await db('pawvault_vaccinations').where({ pet_id: petId }).orderBy('id')).map((row: { vaccine: string; vaccine_key: string }) => [row.vaccine, row.vaccine_key]);
  await step.up(db);
  t.deepEqual(await keys(), [
    ['İmovax  Rabies', 'imovax rabies'], ['imovax rabies', 'imovax rabies'], ['ΛΥΣΣΑΣ', 'λυσσασ'], ['λυσσασ', 'λυσσασ'], [' Kennel   COUGH ', 'kennel cough'],
  ]);
  // Down gives back 0024's keys.
  await step.down(db);
  t.deepEqual(await keys(), before.map((row) => [row.vaccine, row.vaccine_key]));
  await step.up(db);
});

testOnEachDatabase('0029 keys terrain\'s and reclaim\'s names whatever their case, spacing or composition, renaming later duplicates, and pawvault\'s doses alike', async (t, { db }) => {
  const step = migration('20261129_0029_name_keys');
  await step.down(db);
  const [a, b] = [await tenant(db), await tenant(db)];
  const id = (n: number) => `00000000-0000-4000-8000-0000000003${String(n).padStart(2, '0')}`;
  // Workflows keyed as 0027 keyed them (case folded alone): these were four names there.
  const workflow = (n: number, tenantId: string, name: string, name_key: string) => ({ id: id(n), tenant_id: tenantId, name, name_key, step_count: 1, created_at: 100 + n });
  await db('terrain_workflows').insert([
    workflow(1, a, 'Site survey', 'site survey'), workflow(2, a, 'Site  survey', 'site  survey'), workflow(3, a, 'Cafe\u0301 audit', 'cafe\u0301 audit'),
    workflow(4, a, 'café audit', 'café audit'), workflow(5, b, 'SITE  SURVEY', 'site  survey'),
  ]);
  // Policies unique as spelled: "Orders" and "ORDERS" were two.
  const policy = (n: number, tenantId: string, name: string) => ({
    id: id(10 + n), tenant_id: tenantId, name, target_kind: 'database', target_name: 'db', retention_days: 7, rpo_minutes: 60, status: 'active', created_at: 100 + n, updated_at: 100 + n,
  });
  await db('reclaim_policies').insert([policy(1, a, 'Orders'), policy(2, a, 'ORDERS'), policy(3, a, 'orders (2)'), policy(4, a, 'Ledger'), policy(5, b, 'orders')]);
  const petId = randomUUID();
  await db('pawvault_pets').insert({ id: petId, tenant_id: a, name: 'Rex', species: 'dog', created_at: 1, updated_at: 1 });
  const dose = (n: number, vaccine: string, vaccine_key: string) => ({ id: id(20 + n), tenant_id: a, pet_id: petId, vaccine, vaccine_key, administered_on: n, due_on: null, created_at: 1 });
  await db('pawvault_vaccinations').insert([dose(1, 'Fie\u0300vre  aphteuse', 'fie\u0300vre aphteuse'), dose(2, 'fièvre aphteuse', 'fièvre aphteuse')]);

  await step.up(db);
  const named = async (table: string, from: number) =>
    (await db(table).whereIn('id', Array.from({ length: 5 }, (_, i) => id(from + i + 1))).orderBy('id').select('name', 'name_key')).map((r: { name: string; name_key: string }) => [r.name, r.name_key]);
  t.deepEqual(await named('terrain_workflows', 0), [
    ['Site survey', 'site survey'], ['Site  survey (2)', 'site survey (2)'], ['Cafe\u0301 audit', 'café audit'], ['café audit (2)', 'café audit (2)'], ['SITE  SURVEY', 'site survey'],
  ]);
  t.deepEqual(await named('reclaim_policies', 10), [
    ['Orders', 'orders'], ['ORDERS (3)', 'orders (3)'], ['orders (2)', 'orders (2)'], ['Ledger', 'ledger'], ['orders', 'orders'],
  ]);
  t.deepEqual(await db('pawvault_vaccinations').where({ pet_id: petId }).orderBy('id').pluck('vaccine_key'), ['fièvre aphteuse', 'fièvre aphteuse']);
  const insert = (row: object) => db('reclaim_policies').insert(row).then(() => 'inserted', () => 'refused');
  t.is(await insert({ ...policy(6, a, 'LEDGER'), name_key: 'ledger' }), 'refused', 'the key is unique in the tenant');
  t.is(await insert({ ...policy(7, b, 'LEDGER'), name_key: 'ledger' }), 'inserted', 'another tenant has its own names');

  // Down gives back the keys of 0027 and 0028 and reclaim's index on the name as spelled; renamed names stay renamed.
  await step.down(db);
  t.deepEqual((await db('terrain_workflows').whereIn('id', [id(2), id(3)]).orderBy('id').select('name_key')).map((r: { name_key: string }) => r.name_key), ['site  survey (2)', 'cafe\u0301 audit']);
  t.deepEqual(await db('pawvault_vaccinations').where({ pet_id: petId }).orderBy('id').pluck('vaccine_key'), ['fie\u0300vre aphteuse', 'fièvre aphteuse']);
  t.is(await insert(policy(8, a, 'Ledger')), 'refused', 'the name as spelled is unique again');
  t.is(await insert(policy(9, a, 'LEDGER ')), 'inserted');
  await db('reclaim_policies').whereIn('id', [id(17), id(19)]).delete();
  await step.up(db);
});
