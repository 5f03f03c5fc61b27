/**
 * A pet deleted while health records are being written for it: each record either lands before
 * the deletion (and goes with the pet, counted in what the deletion reports) or answers not_found;
 * none fails as internal, and no record outlives its pet, on every database. An update of the pet
 * waiting for the deletion answers not_found (PostgreSQL).
 */
import { connect, mcpPostgresTest, mcpTest, auditOf } from '../helpers/mcp.js';
import { pawvault } from '../../mcp/products/pawvault/index.js';
import { call, confirmation, connections, inLine, unexpected } from './parallel_support.js';

const HEALTH = ['pawvault_vaccinations', 'pawvault_visits', 'pawvault_medications'];

mcpTest('health records written while their pet is deleted land before the deletion or answer not_found', async (t, server) => {
  const { client, close } = await connect(server, { product: 'pawvault', tenant: 'acme', scopes: Object.keys(pawvault.scopes) });
  try {
    for (let round = 0; round < 6; round += 1) {
      const pet = await call(client, 'pawvault.add_pet', { name: `Parallel ${round}`, species: 'dog' });
      t.true(pet.ok, JSON.stringify(pet));
      const petId: string = pet.value.id;
      const deleteNow = await confirmation(client, 'pawvault.delete_pet', { pet_id: petId });
      const writes = [
        () => call(client, 'pawvault.record_vaccination', { pet_id: petId, vaccine: 'Rabies', administered_on: '2024-01-02', due_on: '2027-01-02' }),
        () => call(client, 'pawvault.record_visit', { pet_id: petId, visited_on: '2024-02-03', reason: 'check-up' }),
        () => call(client, 'pawvault.add_medication', { pet_id: petId, name: 'Carprofen', dosage: '25 mg', frequency: 'daily', start_date: '2024-03-04' }),
        () => call(client, 'pawvault.record_visit', { pet_id: petId, visited_on: '2024-02-04', reason: 'follow-up' }),
      ];
      const [deleted, ...written] = await Promise.all([deleteNow(), ...writes.map((write) => write())]);
      t.true(deleted.ok, JSON.stringify(deleted));
      t.deepEqual(unexpected(written, ['not_found']), [], `round ${round}: every write succeeded or answered not_found`);
      for (const table of HEALTH) t.is((await server.db(table).where({ pet_id: petId })).length, 0, `no ${table} row outlives its pet`);
      const reported = Object.values(deleted.value.records_deleted as Record<string, number>).reduce((sum, n) => sum + n, 0);
      t.is(reported, written.filter((o) => o.ok).length, `round ${round}: the deletion reports every record that went with the pet`);
    }
    const records = (await auditOf(server, 'acme', { product: 'pawvault' })).filter((r) => r.name !== 'pawvault.delete_pet');
    t.deepEqual(records.filter((r) => !['ok', 'not_found'].includes(r.outcome)).map((r) => `${r.name} ${r.outcome}`), [], 'audited as ok or not_found');
  } finally {
    await close();
  }
});

mcpPostgresTest('a pet deleted while an update of it waits answers the update with not_found', async (t, server) => {
  const [a, b] = await connections(server, { product: 'pawvault', tenant: 'acme', scopes: Object.keys(pawvault.scopes) }, 2);
  try {
    const pet = await call(a.client, 'pawvault.add_pet', { name: 'Leaving', species: 'cat' });
    t.true(pet.ok, JSON.stringify(pet));
    const [deleted, updated] = await inLine(t, server.db, 'pawvault_pets', pet.value.id, [
      await confirmation(a.client, 'pawvault.delete_pet', { pet_id: pet.value.id }),
      () => call(b.client, 'pawvault.update_pet', { pet_id: pet.value.id, weight_kg: 4.2 }),
    ]);
    t.true(deleted.ok, JSON.stringify(deleted));
    t.is(updated.code, 'not_found', JSON.stringify(updated));
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
