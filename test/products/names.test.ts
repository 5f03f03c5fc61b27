/**
 * Names are written and compared one way in every product (nameArg, nameKey in
 * mcp/products/common.ts): Unicode NFC, white space made one space and trimmed, control and format
 * characters refused, the length counted once normalised; unique names (terrain's workflows,
 * reclaim's policies) and grouped ones (pawvault's vaccines) are one name whatever their case,
 * spacing or Unicode composition, and filters find a name however it was spelled.
 */
import test, { type ExecutionContext } from 'ava';
import type { z } from 'zod';
import { PRODUCTS } from '../../mcp/products/index.js';
import { connect, mcpTest, type McpTestServer } from '../helpers/mcp.js';
import { call, connections, unexpected } from './parallel_support.js';

/**
 * The arguments that hold a name, a title or another one-line label (and the filters that look
 * for one), by key wherever they are in a tool's input, plus the few whose key other tools use
 * for free text. A new tool with such an argument is checked without being listed here.
 */
const NAME_KEYS = new Set([
  'name', 'title', 'full_name', 'customer', 'subject', 'source', 'item', 'location', 'vaccine', 'clinic', 'breed', 'department', 'job_title',
  'target_name', 'dosage', 'frequency', 'query', 'tag', 'tags[]',
]);
const NAME_PATHS = new Set(['cavalier.create_quote.line_items[].description', 'midas.update_endpoint.summary']);

/** Every string argument of `schema` with its path (`steps[].name`), through optional, nullable, arrays and objects. */
function* stringArguments(schema: z.ZodType, path: string): Generator<[string, z.ZodType]> {
  const def = (schema as unknown as { _zod: { def: { type: string; innerType?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> } } })._zod.def;
  if (def.type === 'optional' || def.type === 'nullable') yield* stringArguments(def.innerType!, path);
  else if (def.type === 'array') yield* stringArguments(def.element!, `${path}[]`);
  else if (def.type === 'object') for (const [key, child] of Object.entries(def.shape!)) yield* stringArguments(child, path ? `${path}.${key}` : key);
  else if (def.type === 'string') yield [path, schema];
}

function nameArguments(): Array<[string, z.ZodType]> {
  const found: Array<[string, z.ZodType]> = [];
  for (const product of PRODUCTS) {
    for (const tool of product.tools) {
      for (const [key, schema] of Object.entries(tool.input as Record<string, z.ZodType>)) {
        for (const [path, string] of stringArguments(schema, key)) {
          const last = path.split('.').at(-1)!;
          if (NAME_KEYS.has(last) || NAME_PATHS.has(`${tool.name}.${path}`)) found.push([`${tool.name}.${path}`, string]);
        }
      }
    }
  }
  return found;
}

test('every name argument of every tool is normalised before its length is counted, and refuses control and format characters', (t) => {
  const names = nameArguments();
  t.true(names.length >= 50, `${names.length} name arguments found`);
  for (const path of NAME_PATHS) t.true(names.some(([found]) => found === path), `${path} is an argument`);
  const products = new Set(names.map(([path]) => path.split('.')[0]));
  t.deepEqual([...products].sort(), PRODUCTS.map((p) => p.id).filter((id) => id !== 'aegis').sort(), 'aegis takes no names (ids, a severity, a free-text note)');
  for (const [path, schema] of names) {
    // An accent sent as a combining mark, a tab, a no-break space and a line break inside, spaces around.
    t.deepEqual(schema.safeParse('  Cafe\u0301 \t du\u00a0\nNord  '), { success: true, data: 'Café du Nord' }, path);
    for (const [what, text] of [['zero-width space', 'Caf\u200be'], ['right-to-left override', 'abc\u202egpj.exe'], ['escape', 'red\u001b[31m'], ['bell', 'a\u0007b']]) {
      const parsed = schema.safeParse(text);
      t.false(parsed.success, `${path} took a ${what}`);
      t.true(parsed.error?.issues.some((issue) => /control or format characters/.test(issue.message)), `${path}: ${what}`);
    }
    t.false(schema.safeParse(' \u3000\t ').success, `${path} took white space alone`);
  }
});

test('a name\'s maximum counts the name as stored: normalised first', (t) => {
  const [, schema] = nameArguments().find(([path]) => path === 'terrain.create_workflow.name')!;
  t.true(schema.safeParse(`${'e\u0301'.repeat(200)}`).success, '200 accented letters sent decomposed (400 code units) are 200 stored');
  t.true(schema.safeParse(`  ${'a'.repeat(200)}  `).success);
  t.false(schema.safeParse('a'.repeat(201)).success);
});

const TERRAIN = ['terrain.workflows.read', 'terrain.workflows.write'];
const RECLAIM = ['reclaim.policies.read', 'reclaim.policies.write'];
const STEPS = [{ name: 'Walk the site' }];

/** Calls `tool` with `name` under `field`, expecting `code`; the workflow or policy count must not change unless it succeeds. */
async function refusedWithoutWriting(t: ExecutionContext, server: McpTestServer, table: string, attempt: () => ReturnType<typeof call>, code: string, label: string) {
  const count = async () => Number((await server.db(table).count({ n: '*' }).first())?.n);
  const before = await count();
  const outcome = await attempt();
  t.is(outcome.code, code, `${label}: ${JSON.stringify(outcome)}`);
  t.is(await count(), before, `${label}: nothing written`);
  return outcome;
}

mcpTest('terrain: a workflow name is stored normalised and is one name whatever its spacing or composition', async (t, server) => {
  const { client, close } = await connect(server, { product: 'terrain', tenant: 'acme', scopes: TERRAIN });
  try {
    const created = await call(client, 'terrain.create_workflow', { name: '  Cafe\u0301   inspection ', steps: [{ name: 'Check\tthe  kitchen' }] });
    t.true(created.ok, JSON.stringify(created));
    t.like(created.value, { name: 'Café inspection', steps: [{ name: 'Check the kitchen' }] });
    const row = await server.db('terrain_workflows').where({ id: created.value.id }).first();
    t.like(row, { name: 'Café inspection', name_key: 'café inspection' });
    for (const name of ['café  inspection', 'CAFE\u0301 INSPECTION', 'Café\u00a0Inspection']) {
      const refused = await refusedWithoutWriting(t, server, 'terrain_workflows', () => call(client, 'terrain.create_workflow', { name, steps: STEPS }), 'conflict', name);
      t.regex(refused.value.message, /a workflow named ".*" already exists/);
    }
    const invisible = await refusedWithoutWriting(t, server, 'terrain_workflows',
      () => call(client, 'terrain.create_workflow', { name: 'Café\u200binspection', steps: STEPS }), 'invalid_arguments', 'zero-width space');
    t.regex(invisible.value.message, /invalid arguments: name: must not contain control or format characters/);
    const step = await refusedWithoutWriting(t, server, 'terrain_workflows',
      () => call(client, 'terrain.create_workflow', { name: 'Bidi', steps: [{ name: 'abc\u202egpj' }] }), 'invalid_arguments', 'bidi override in a step');
    t.regex(step.value.message, /invalid arguments: steps\.0\.name: must not contain control or format characters/);
  } finally {
    await close();
  }
});

mcpTest('reclaim: policy names are unique whatever their case, spacing or composition, on create and on update', async (t, server) => {
  const { client, close } = await connect(server, { product: 'reclaim', tenant: 'acme', scopes: RECLAIM });
  const policy = (name: string) => ({ name, target_kind: 'database', target_name: ' orders-db ', retention_days: 30, rpo_minutes: 60 });
  try {
    const orders = await call(client, 'reclaim.create_policy', policy('Orders  Cafe\u0301'));
    t.true(orders.ok, JSON.stringify(orders));
    t.like(orders.value, { name: 'Orders Café', target_name: 'orders-db' });
    t.like(await server.db('reclaim_policies').where({ id: orders.value.id }).first(), { name: 'Orders Café', name_key: 'orders café' });
    for (const name of ['orders café', 'ORDERS CAFÉ', ' Orders\tCafe\u0301']) {
      const refused = await refusedWithoutWriting(t, server, 'reclaim_policies', () => call(client, 'reclaim.create_policy', policy(name)), 'conflict', name);
      t.regex(refused.value.message, /a recovery policy named ".*" already exists/);
    }
    // Renaming into another policy's name in another case is a conflict; into its own in another case is a rename.
    const billing = await call(client, 'reclaim.create_policy', policy('Billing'));
    t.true(billing.ok, JSON.stringify(billing));
    const taken = await call(client, 'reclaim.update_policy', { policy_id: billing.value.id, name: 'ORDERS CAFÉ' });
    t.is(taken.code, 'conflict', JSON.stringify(taken));
    t.is((await server.db('reclaim_policies').where({ id: billing.value.id }).first()).name, 'Billing');
    const renamed = await call(client, 'reclaim.update_policy', { policy_id: orders.value.id, name: 'ORDERS CAFÉ' });
    t.true(renamed.ok, JSON.stringify(renamed));
    t.like(renamed.value, { name: 'ORDERS CAFÉ', changed: ['name'] });
    t.like(await server.db('reclaim_policies').where({ id: orders.value.id }).first(), { name: 'ORDERS CAFÉ', name_key: 'orders café' });
    // Another organization's names are its own.
    const globex = await connect(server, { product: 'reclaim', tenant: 'globex', scopes: RECLAIM });
    try {
      t.true((await call(globex.client, 'reclaim.create_policy', policy('orders café'))).ok);
    } finally {
      await globex.close();
    }
  } finally {
    await close();
  }
});

mcpTest('reclaim: two creates of one policy name in different case at the same time: one policy, the other a conflict', async (t, server) => {
  const clients = await connections(server, { product: 'reclaim', tenant: 'globex', scopes: RECLAIM }, 2);
  try {
    for (let round = 0; round < 5; round += 1) {
      const names = [`Ledger ${round}`, `LEDGER  ${round}`];
      const outcomes = await Promise.all(clients.map(({ client }, i) => call(client, 'reclaim.create_policy', {
        name: names[i], target_kind: 'database', target_name: 'ledger-db', retention_days: 7, rpo_minutes: 60,
      })));
      t.deepEqual(unexpected(outcomes, ['conflict']), [], `round ${round}`);
      t.is(outcomes.filter((o) => o.ok).length, 1, `round ${round}: ${JSON.stringify(outcomes)}`);
      t.is((await server.db('reclaim_policies').where({ tenant_id: server.tenants.globex.id, name_key: `ledger ${round}` })).length, 1, `round ${round}`);
    }
  } finally {
    for (const { close } of clients) await close();
  }
});

mcpTest('pawvault: a booster spelled with a combining accent replaces the dose spelled precomposed', async (t, server) => {
  const { client, close } = await connect(server, { product: 'pawvault', tenant: 'acme', scopes: ['pawvault.pets.read', 'pawvault.pets.write', 'pawvault.health.read', 'pawvault.health.write'] });
  try {
    const pet = await call(client, 'pawvault.add_pet', { name: ' Rex\u00a0 Junior ', species: 'dog' });
    t.true(pet.ok, JSON.stringify(pet));
    t.is(pet.value.name, 'Rex Junior');
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const first = await call(client, 'pawvault.record_vaccination', { pet_id: pet.value.id, vaccine: 'Fièvre aphteuse', administered_on: day(-400), due_on: day(-35) });
    t.true(first.ok, JSON.stringify(first));
    const booster = await call(client, 'pawvault.record_vaccination', { pet_id: pet.value.id, vaccine: 'FIE\u0300VRE  aphteuse', administered_on: day(-30), due_on: day(335) });
    t.true(booster.ok, JSON.stringify(booster));
    t.is(booster.value.vaccine, 'FIÈVRE aphteuse');
    const keys = await server.db('pawvault_vaccinations').where({ pet_id: pet.value.id }).pluck('vaccine_key');
    t.deepEqual(keys, ['fièvre aphteuse', 'fièvre aphteuse']);
    const due = await call(client, 'pawvault.list_due_vaccinations', { pet_id: pet.value.id, within_days: 30 });
    t.true(due.ok, JSON.stringify(due));
    t.deepEqual(due.value.due, [], 'the earlier dose is replaced by the booster, so it is not overdue');
  } finally {
    await close();
  }
});

mcpTest('filters find a name however the filter spells its spacing and composition (cavalier, people)', async (t, server) => {
  const cavalier = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: ['cavalier.deals.read', 'cavalier.deals.write'] });
  try {
    const deal = await call(cavalier.client, 'cavalier.create_deal', { title: 'Espresso  machines', customer: 'Cafe\u0301  Noir SARL', currency: 'EUR', value_minor: 100_000 });
    t.true(deal.ok, JSON.stringify(deal));
    t.like(deal.value, { title: 'Espresso machines', customer: 'Café Noir SARL' });
    for (const customer of ['café noir', 'CAFE\u0301   NOIR', 'Café\tNoir']) {
      const found = await call(cavalier.client, 'cavalier.list_deals', { customer });
      t.deepEqual(found.value.deals.map((d: { id: string }) => d.id), [deal.value.id], customer);
    }
  } finally {
    await cavalier.close();
  }
  const people = await connect(server, { product: 'people', tenant: 'acme', scopes: ['people.profiles.read', 'people.profiles.write'] });
  try {
    const person = await call(people.client, 'people.create_person', {
      full_name: 'Zoe\u0308  Martin', email: 'zoe.martin@acme.example', department: ' Re\u0301seau  Ops ', start_date: '2026-01-05',
    });
    t.true(person.ok, JSON.stringify(person));
    t.like(person.value, { full_name: 'Zoë Martin', department: 'Réseau Ops' });
    const byDepartment = await call(people.client, 'people.list_people', { department: 'RÉSEAU\u00a0OPS' });
    t.deepEqual(byDepartment.value.people.map((p: { id: string }) => p.id), [person.value.id]);
    const byName = await call(people.client, 'people.list_people', { query: 'zoe\u0308 martin' });
    t.deepEqual(byName.value.people.map((p: { id: string }) => p.id), [person.value.id]);
  } finally {
    await people.close();
  }
});
