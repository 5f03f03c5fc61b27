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
