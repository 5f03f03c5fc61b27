/** pawvault through the MCP pipeline with a real SDK client, on every database. */
import { randomUUID } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { pawvault } from '../../mcp/products/pawvault/index.js';
import {
  assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertToolError, productSuite, type ProductEnv, type Tenant,
} from './product_suite.js';

const each = productSuite('pawvault');
const ALL = Object.keys(pawvault.scopes);
const PETS = ['pawvault.pets.read', 'pawvault.pets.write'];
const HEALTH = ['pawvault.health.read', 'pawvault.health.write'];

/** A calendar date `days` from today (UTC), as the server computes "today". */
const day = (days: number) => new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + days * 86_400_000).toISOString().slice(0, 10);

async function petNamed(env: ProductEnv, tenant: Tenant, name: string) {
  return env.server.db('pawvault_pets').where({ tenant_id: env.server.tenants[tenant].id, name }).first();
}

each('every pawvault tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of pawvault.tools) {
    await assertInsufficientScope(t, env, 'pawvault', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each('each household sees its own pets, with age computed from the birth date', async (t, env) => {
  const acme = await env.ok(t, 'acme', PETS, 'pawvault.list_pets', { limit: 100 });
  t.true(acme.pets.some((p: any) => p.name === 'Biscuit' && p.species === 'dog' && p.age_years === 5));
  t.false(acme.pets.some((p: any) => p.name === 'Luna'));
  const cats = await env.ok(t, 'acme', PETS, 'pawvault.list_pets', { species: 'cat' });
  t.deepEqual(cats.pets.map((p: any) => p.name), ['Miso']);
  const rabbits = await env.ok(t, 'globex', PETS, 'pawvault.list_pets', { species: 'rabbit' });
  t.deepEqual(rabbits.pets.map((p: any) => p.name), ['Pixel']);
  const added = await env.ok(t, 'acme', PETS, 'pawvault.add_pet', { name: 'Old Tom', species: 'cat', birth_date: '2010-03-15' });
  const now = new Date();
  const expected = now.getUTCFullYear() - 2010 - (now.getUTCMonth() < 2 || (now.getUTCMonth() === 2 && now.getUTCDate() < 15) ? 1 : 0);
  t.is(added.age_years, expected);
});

each('list_due_vaccinations is computed from dates: overdue, due soon, window edges, latest dose only', async (t, env) => {
  const pet = await env.ok(t, 'globex', PETS, 'pawvault.add_pet', { name: 'Dates', species: 'dog' });
  const record = (vaccine: string, given: number, due: number) =>
    env.ok(t, 'globex', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine, administered_on: day(given), due_on: day(due) });
  await record('Overdue', -400, -1);
  await record('Today', -365, 0);
  await record('Edge', -300, 30);
  await record('Beyond', -300, 31);
  await record('Boosted', -700, -300); // replaced by the booster below
  await record('boosted ', -5, 360);

  const due = await env.ok(t, 'globex', HEALTH, 'pawvault.list_due_vaccinations', { pet_id: pet.id });
  t.is(due.as_of, day(0));
  t.is(due.within_days, 30);
  t.deepEqual(due.due.map((d: any) => [d.vaccine, d.due_on, d.days_until_due, d.status]), [
    ['Overdue', day(-1), -1, 'overdue'],
    ['Today', day(0), 0, 'due_soon'],
    ['Edge', day(30), 30, 'due_soon'],
  ]);
  t.true(due.due.every((d: any) => d.pet_id === pet.id && d.pet_name === 'Dates'));
  const upcoming = await env.ok(t, 'globex', HEALTH, 'pawvault.list_due_vaccinations', { pet_id: pet.id, within_days: 31, include_overdue: false });
  t.deepEqual(upcoming.due.map((d: any) => d.vaccine), ['Today', 'Edge', 'Beyond']);
  const year = await env.ok(t, 'globex', HEALTH, 'pawvault.list_due_vaccinations', { pet_id: pet.id, within_days: 365 });
  t.deepEqual(year.due.map((d: any) => d.vaccine), ['Overdue', 'Today', 'Edge', 'Beyond', 'boosted']);
  t.is(year.due.at(-1).last_given_on, day(-5));

  // The demo household: a whole-household answer across pets, soonest first.
  const acme = await env.ok(t, 'acme', HEALTH, 'pawvault.list_due_vaccinations', {});
  const demo = acme.due.filter((d: any) => ['Biscuit', 'Miso'].includes(d.pet_name));
  t.deepEqual(demo.map((d: any) => [d.pet_name, d.vaccine, d.days_until_due, d.status]), [
    ['Biscuit', 'DHPP', -35, 'overdue'], ['Miso', 'FVRCP', 10, 'due_soon'], ['Biscuit', 'Rabies', 25, 'due_soon'],
  ]);
});

each('a booster is the same vaccine whatever its case or spacing, as every name in Portico (nameKey)', async (t, env) => {
  const pet = await env.ok(t, 'globex', PETS, 'pawvault.add_pet', { name: 'Folded', species: 'cat' });
  const record = (vaccine: string, given: number, due: number) =>
    env.ok(t, 'globex', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine, administered_on: day(given), due_on: day(due) });
  // A dotted capital I (a Turkish keyboard) and a final sigma typed as a plain one spell the same
  // vaccine as their booster; spacing and case still do not matter either.
  await record('İmovax Rabies', -400, -30);
  await record('imovax   rabies', -5, 360);
  await record('ΛΥΣΣΑΣ', -400, -20);
  await record('λυσσασ', -4, 361);
  await record('Kennel Cough', -400, -10);
  await record(' kennel  COUGH', -3, 362);
  const due = await env.ok(t, 'globex', HEALTH, 'pawvault.list_due_vaccinations', { pet_id: pet.id, within_days: 365 });
  // Names are stored as every product stores them: spacing made one space, trimmed.
  t.deepEqual(due.due.map((d: any) => [d.vaccine, d.last_given_on]), [['imovax rabies', day(-5)], ['λυσσασ', day(-4)], ['kennel COUGH', day(-3)]]);
});

each('health records: vaccinations, visits and medications are recorded and read back per pet', async (t, env) => {
  const pet = await env.ok(t, 'acme', PETS, 'pawvault.add_pet', { name: 'Records', species: 'rabbit', weight_kg: 1.8, microchip_number: '250268500123456' });
  const vaccination = await env.ok(t, 'acme', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine: 'RHDV2', administered_on: day(-10), due_on: day(355), clinic: 'Hop Clinic' });
  t.deepEqual(vaccination, { id: vaccination.id, pet_id: pet.id, vaccine: 'RHDV2', administered_on: day(-10), due_on: day(355), clinic: 'Hop Clinic', notes: null });
  const visit = await env.ok(t, 'acme', HEALTH, 'pawvault.record_visit', { pet_id: pet.id, visited_on: day(-10), reason: 'Vaccination', cost_cents: 4500 });
  t.is(visit.cost_cents, 4500);
  const ended = await env.ok(t, 'acme', HEALTH, 'pawvault.add_medication', { pet_id: pet.id, name: 'Metacam', dosage: '0.3 ml', frequency: 'daily', start_date: day(-20), end_date: day(-1) });
  const ongoing = await env.ok(t, 'acme', HEALTH, 'pawvault.add_medication', { pet_id: pet.id, name: 'Probiotic', dosage: '1 g', frequency: 'daily', start_date: day(-3) });
  t.false(ended.active);
  t.true(ongoing.active);

  const records = await env.ok(t, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id });
  t.deepEqual(records.pet, { id: pet.id, name: 'Records', species: 'rabbit' });
  t.deepEqual(records.vaccinations.map((v: any) => v.id), [vaccination.id]);
  t.deepEqual(records.visits.map((v: any) => v.id), [visit.id]);
  t.deepEqual(records.medications.map((m: any) => m.name), ['Probiotic', 'Metacam']);
  t.deepEqual([records.vaccinations_total, records.visits_total, records.medications_total], [1, 1, 2]);
  t.deepEqual([records.vaccinations_truncated, records.visits_truncated, records.medications_truncated], [false, false, false]);
  // Past the limit, the caller is told how many there are and that older ones were left out.
  const newest = await env.ok(t, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, limit: 1 });
  t.deepEqual(newest.medications.map((m: any) => m.name), ['Probiotic']);
  t.is(newest.medications_total, 2);
  t.true(newest.medications_truncated);
  t.false(newest.visits_truncated);
  const onlyVisits = await env.ok(t, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, kind: 'visits' });
  t.deepEqual(Object.keys(onlyVisits).sort(), ['next_cursor', 'pet', 'visits', 'visits_total', 'visits_truncated']);
  t.is(onlyVisits.next_cursor, null);
  const full = await env.ok(t, 'acme', [...PETS, 'pawvault.health.read'], 'pawvault.get_pet', { pet_id: pet.id });
  t.is(full.microchip_number, '250268500123456');
  t.is(full.uri, `portico://pawvault/pets/${pet.id}`);
  t.is(full.medications.length, 2);
  const profileOnly = await env.ok(t, 'acme', PETS, 'pawvault.get_pet', { pet_id: pet.id });
  t.is(profileOnly.medications, undefined);
  t.is(profileOnly.medications_omitted, 'reading medications needs the scope pawvault.health.read');

  const updated = await env.ok(t, 'acme', PETS, 'pawvault.update_pet', { pet_id: pet.id, weight_kg: 2.1, microchip_number: null, notes: 'Loves kale' });
  t.is(updated.weight_kg, 2.1);
  t.is(updated.microchip_number, null);
  t.is(updated.notes, 'Loves kale');
  t.is(updated.name, 'Records');
});

/** Every page of a health-records listing, following next_cursor; each page's records by kind. */
async function allPages(t: ExecutionContext, env: ProductEnv, args: Record<string, unknown>) {
  const pages: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.ok(t, 'acme', HEALTH, 'pawvault.list_health_records', { ...args, ...(cursor ? { cursor } : {}) });
    pages.push(page);
    cursor = page.next_cursor ?? undefined;
    if (pages.length > 100) t.fail('the listing does not end');
  } while (cursor);
  return pages;
}

each('list_health_records pages through every record with a cursor, newest first, ties by id', async (t, env) => {
  const pet = await env.ok(t, 'acme', PETS, 'pawvault.add_pet', { name: 'Many visits', species: 'dog' });
  const tenantId = env.server.tenants.acme.id;
  const at = (date: string) => Date.parse(`${date}T00:00:00Z`);
  // More visits than the largest page (200), most on one day so that page boundaries fall among
  // ties, and the oldest before 1970 (a negative key) so that the last boundary falls on it too.
  const dates = [...Array(200).fill(at(day(-5))), ...Array(29).fill(at(day(-40))), at('1969-12-31'), at('1969-12-31')];
  const visits = dates.map((visited_on, i) => ({ id: randomUUID(), tenant_id: tenantId, pet_id: pet.id, visited_on, reason: `Check ${i}`, created_at: Date.now() }));
  for (let i = 0; i < visits.length; i += 50) await env.server.db('pawvault_visits').insert(visits.slice(i, i + 50));
  const medications = ['A', 'B', 'C'].map((name) => ({
    id: randomUUID(), tenant_id: tenantId, pet_id: pet.id, name, dosage: '1', frequency: 'daily', start_date: at(day(-5)), created_at: Date.now(),
  }));
  await env.server.db('pawvault_medications').insert(medications);
  const newestFirst = (rows: Array<{ id: string }>, key: (row: any) => number) =>
    [...rows].sort((a, b) => key(b) - key(a) || (a.id < b.id ? 1 : -1)).map((row) => row.id);
  const expectedVisits = newestFirst(visits, (v) => v.visited_on);

  // The largest page leaves the rest out, and its cursor reads them.
  const first = await env.ok(t, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, kind: 'visits', limit: 200 });
  t.like(first, { visits_total: visits.length, visits_truncated: true });
  t.is(typeof first.next_cursor, 'string');
  const rest = await env.ok(t, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, kind: 'visits', limit: 200, cursor: first.next_cursor });
  t.like(rest, { visits_total: visits.length, visits_truncated: false, next_cursor: null });
  t.deepEqual([...first.visits, ...rest.visits].map((v: any) => v.id), expectedVisits);

  // Small pages: boundaries among ties and on the 1969 visit (a cursor with a negative key), none repeated or skipped.
  const small = await allPages(t, env, { pet_id: pet.id, kind: 'visits', limit: 10 });
  t.is(small.length, Math.ceil(visits.length / 10));
  t.deepEqual(small.flatMap((page) => page.visits.map((v: any) => v.id)), expectedVisits);
  t.true(small.slice(0, -1).every((page) => page.visits_truncated), 'every page but the last leaves records out');

  // Every kind at once: the cursor carries on each kind that has more; one that ended shows none.
  const together = await allPages(t, env, { pet_id: pet.id, limit: 100 });
  t.is(together.length, 3);
  t.deepEqual(together.flatMap((page) => page.visits.map((v: any) => v.id)), expectedVisits);
  t.deepEqual(together.flatMap((page) => page.medications.map((m: any) => m.id)), newestFirst(medications, (m) => m.start_date));
  t.deepEqual(together.map((page) => [page.vaccinations.length, page.medications.length, page.medications_truncated, page.medications_total]), [[0, 3, false, 3], [0, 0, false, 3], [0, 0, false, 3]]);

  // A cursor continues the listing it came from: not another kind's, another shape's or another pet's.
  const other = await env.ok(t, 'acme', PETS, 'pawvault.add_pet', { name: 'Few visits', species: 'cat' });
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, kind: 'medications', cursor: first.next_cursor }, 'cursor');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, cursor: first.next_cursor }, 'cursor');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, kind: 'visits', cursor: together[0].next_cursor }, 'cursor');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: other.id, kind: 'visits', cursor: first.next_cursor }, 'cursor');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: pet.id, kind: 'visits', cursor: 'not-a-cursor' }, 'cursor');
});

each('delete_pet follows the confirmation protocol and removes the pet with all of its records', async (t, env) => {
  const pet = await env.ok(t, 'globex', PETS, 'pawvault.add_pet', { name: 'Goner', species: 'bird' });
  await env.ok(t, 'globex', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine: 'Polyomavirus', administered_on: day(-30), due_on: day(335) });
  await env.ok(t, 'globex', HEALTH, 'pawvault.record_visit', { pet_id: pet.id, visited_on: day(-30), reason: 'Check-up' });
  await env.ok(t, 'globex', HEALTH, 'pawvault.record_visit', { pet_id: pet.id, visited_on: day(-2), reason: 'Feather plucking' });
  await env.ok(t, 'globex', HEALTH, 'pawvault.add_medication', { pet_id: pet.id, name: 'Vitamin drops', dosage: '2 drops', frequency: 'daily', start_date: day(-2) });
  const counts = async () => Promise.all(['pawvault_vaccinations', 'pawvault_visits', 'pawvault_medications'].map(async (table) => (await env.server.db(table).where({ pet_id: pet.id })).length));

  const first = await env.call('globex', PETS, 'pawvault.delete_pet', { pet_id: pet.id });
  t.is(first.structured.code, 'confirmation_required');
  t.is(first.structured.will_destroy, `Pet ${pet.id} and all of its vaccinations, vet visits and medications will be deleted permanently.`);
  t.truthy(await env.server.db('pawvault_pets').where({ id: pet.id }).first());
  t.deepEqual(await counts(), [1, 2, 1]);

  const done = await env.call('globex', PETS, 'pawvault.delete_pet', { pet_id: pet.id, confirmed: true });
  t.false(done.isError, JSON.stringify(done.structured));
  t.deepEqual(done.structured, { id: pet.id, name: 'Goner', deleted: true, records_deleted: { vaccinations: 1, visits: 2, medications: 1 } });
  t.falsy(await env.server.db('pawvault_pets').where({ id: pet.id }).first());
  t.deepEqual(await counts(), [0, 0, 0]);

  // Done once: the confirmation is spent, and once confirmed again there is nothing left to delete.
  const replay = await env.call('globex', PETS, 'pawvault.delete_pet', { pet_id: pet.id, confirmed: true });
  t.is(replay.structured.code, 'not_found');
  await assertToolError(t, env, 'globex', PETS, 'pawvault.get_pet', { pet_id: pet.id }, 'not_found');
});

each('invalid pawvault arguments are refused naming the field, and nothing is written', async (t, env) => {
  const pet = await petNamed(env, 'acme', 'Miso');
  const vaccinations = async () => (await env.server.db('pawvault_vaccinations').where({ pet_id: pet.id })).length;
  const before = await vaccinations();
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine: 'FeLV', administered_on: day(-1), due_on: day(-2) }, 'due_on');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine: 'FeLV', administered_on: day(2) }, 'administered_on');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine: 'FeLV', administered_on: '2026-02-29' }, 'administered_on');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.record_vaccination', { pet_id: pet.id, vaccine: '', administered_on: day(-1) }, 'vaccine');
  t.is(await vaccinations(), before);
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.add_medication', { pet_id: pet.id, name: 'x', dosage: '1', frequency: 'daily', start_date: day(0), end_date: day(-1) }, 'end_date');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.list_due_vaccinations', { within_days: 366 }, 'within_days');
  await assertInvalidArguments(t, env, 'acme', HEALTH, 'pawvault.list_due_vaccinations', { within_days: 'soon' }, 'within_days');
  await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.add_pet', { name: 'Nessie', species: 'dinosaur' }, 'species');
  await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.add_pet', { name: 'Chip', species: 'dog', microchip_number: 'ab' }, 'microchip_number');
  await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.add_pet', { name: 'Heavy', species: 'dog', weight_kg: -3 }, 'weight_kg');
  t.falsy(await petNamed(env, 'acme', 'Nessie'));
  await assertToolError(t, env, 'acme', HEALTH, 'pawvault.list_health_records', { pet_id: '00000000-0000-4000-8000-000000000000' }, 'not_found');
});

each("another household's pet is forbidden_cross_tenant for every tool, resource and prompt", async (t, env) => {
  const luna = await petNamed(env, 'globex', 'Luna');
  const args: Record<string, Record<string, unknown>> = {
    'pawvault.record_vaccination': { vaccine: 'Rabies', administered_on: day(-1) },
    'pawvault.record_visit': { visited_on: day(-1), reason: 'x' },
    'pawvault.add_medication': { name: 'x', dosage: '1', frequency: 'daily', start_date: day(-1) },
  };
  for (const tool of pawvault.tools) {
    if (!('pet_id' in tool.input)) continue;
    await assertCrossTenant(t, env, 'pawvault', 'acme', ALL, tool.name, { pet_id: luna.id, ...(args[tool.name] ?? {}) });
  }
  t.truthy(await petNamed(env, 'globex', 'Luna'));
  t.is((await env.server.db('pawvault_vaccinations').where({ pet_id: luna.id })).length, 3);
  const client = await env.client('acme', ALL);
  await t.throwsAsync(client.readResource({ uri: `portico://pawvault/pets/${luna.id}` }), { message: /another organization/ });
  await t.throwsAsync(client.getPrompt({ name: 'pawvault.prepare_vet_visit', arguments: { pet_id: luna.id } }), { message: /another organization/ });
});

each('the pet resource and the vet-visit prompt carry the household data', async (t, env) => {
  const client = await env.client('acme', ALL);
  const biscuit = await petNamed(env, 'acme', 'Biscuit');
  const pet = await env.ok(t, 'acme', ALL, 'pawvault.get_pet', { pet_id: biscuit.id });
  t.deepEqual(JSON.parse(((await client.readResource({ uri: `portico://pawvault/pets/${biscuit.id}` })).contents[0] as { text: string }).text), pet);
  t.deepEqual(pet.medications.map((m: any) => [m.name, m.active]), [['Carprofen', true], ['Amoxicillin', false]]);

  const prompt = await client.getPrompt({ name: 'pawvault.prepare_vet_visit', arguments: { pet_id: biscuit.id, reason: 'Stiff after walks' } });
  const text = (prompt.messages[0].content as { text: string }).text;
  t.regex(text, /Biscuit, a 5-year-old Beagle dog weighing 12\.4 kg/);
  t.regex(text, /Stiff after walks/);
  t.true(text.includes(`- DHPP: due ${day(-35)} (35 days overdue)`));
  t.true(text.includes(`- Rabies: due ${day(25)} (in 25 days)`));
  t.notRegex(text, /Leptospirosis/); // its booster is due in 65 days, past the prompt's 60
  t.regex(text, /Carprofen 25 mg, twice daily with food/);
  t.notRegex(text, /Amoxicillin/);
  t.regex(text, /Allergic to chicken/);
});

each('a weight is kept to the gram on both databases, and a weight below a gram is refused, never internal', async (t, env) => {
  // PostgreSQL keeps weight_kg as real (float4): 1e-50 underflowed it (the call failed as internal)
  // and 12.345678901 came back as 12.345679 there but as given on SQLite.
  const pet = await env.ok(t, 'acme', PETS, 'pawvault.add_pet', { name: 'Grams', species: 'bird', weight_kg: 0.035 });
  t.is(pet.weight_kg, 0.035);
  t.is((await env.ok(t, 'acme', PETS, 'pawvault.get_pet', { pet_id: pet.id })).weight_kg, 0.035);
  t.is((await env.ok(t, 'acme', PETS, 'pawvault.update_pet', { pet_id: pet.id, weight_kg: 999.999 })).weight_kg, 999.999);
  for (const weight_kg of [1e-50, 0.0004, 12.345678901]) {
    await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.add_pet', { name: 'Feather', species: 'bird', weight_kg }, 'weight_kg');
    await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.update_pet', { pet_id: pet.id, weight_kg }, 'weight_kg');
  }
  t.falsy(await petNamed(env, 'acme', 'Feather'));
  t.is((await env.ok(t, 'acme', PETS, 'pawvault.get_pet', { pet_id: pet.id })).weight_kg, 999.999);
});

each('a birth date in the future is refused naming birth_date, as a dose given in the future is', async (t, env) => {
  // It was stored, and the pet read as 0 years old (age_years is never negative).
  await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.add_pet', { name: 'Unborn', species: 'cat', birth_date: day(1) }, 'birth_date');
  await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.add_pet', { name: 'Unborn', species: 'cat', birth_date: '9999-12-31' }, 'birth_date');
  t.falsy(await petNamed(env, 'acme', 'Unborn'));
  const pet = await env.ok(t, 'acme', PETS, 'pawvault.add_pet', { name: 'Newborn', species: 'cat', birth_date: day(0) });
  t.like(pet, { birth_date: day(0), age_years: 0 });
  await assertInvalidArguments(t, env, 'acme', PETS, 'pawvault.update_pet', { pet_id: pet.id, birth_date: day(30) }, 'birth_date');
  t.is((await env.ok(t, 'acme', PETS, 'pawvault.get_pet', { pet_id: pet.id })).birth_date, day(0));
});
