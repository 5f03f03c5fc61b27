/**
 * Records that one connection can multiply through tools (a deal's quotes, a person's history, a
 * policy's schedule segments, a pet's doses) are never all read into one answer: a record shows
 * the newest of them with their total and whether the list was cut, and an answer computed from
 * them reads only what it needs, giving the answer reading everything gave.
 */
import { randomUUID } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { DAY_MS } from '../../mcp/products/common.js';
import { DEAL_RECORDS_SHOWN } from '../../mcp/products/cavalier/repository.js';
import { DUE_SHOWN } from '../../mcp/products/pawvault/repository.js';
import { HISTORY_SHOWN } from '../../mcp/products/people/repository.js';
import { SCHEDULE_SHOWN } from '../../mcp/products/reclaim/repository.js';
import { connect, mcpTest, type McpTestServer } from '../helpers/mcp.js';

async function insertInBatches(server: McpTestServer, table: string, rows: object[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await server.db(table).insert(rows.slice(i, i + 200));
}

async function tool(t: ExecutionContext, server: McpTestServer, product: string, scopes: string[], name: string, args: Record<string, unknown>) {
  const { client, close } = await connect(server, { product, tenant: 'acme', scopes });
  try {
    const result = await client.callTool({ name, arguments: args });
    t.falsy(result.isError, JSON.stringify(result.structuredContent));
    return result.structuredContent as any;
  } finally {
    await close();
  }
}

mcpTest('cavalier: a deal with 1,100 quotes shows the newest 100 with the total, and the SOW prompt embeds only the quote it is based on', async (t, server) => {
  const tenant = server.tenants.acme.id;
  const deal = await server.db('cavalier_deals').where({ tenant_id: tenant }).first();
  const [{ n: before }] = await server.db('cavalier_quotes').where({ deal_id: deal.id }).count({ n: '*' });
  const start = Date.now(); // after the demo's quotes
  const quotes: object[] = [];
  const lines: object[] = [];
  for (let i = 0; i < 1_100; i++) {
    const id = randomUUID();
    // The accepted quote is old: far outside the newest 100, and still the basis of the draft.
    const status = i === 5 ? 'accepted' : 'draft';
    quotes.push({
      id, tenant_id: tenant, deal_id: deal.id, customer: deal.customer, currency: deal.currency, status, tax_rate_bp: 0,
      subtotal_minor: 300 + i, tax_minor: 0, total_minor: 300 + i, valid_until: null, notes: null, created_by: null,
      created_at: start + i * 60_000, updated_at: start, sent_at: null, decided_at: status === 'accepted' ? start : null,
    });
    for (let k = 1; k <= 3; k++) lines.push({ id: randomUUID(), tenant_id: tenant, quote_id: id, position: k, description: `${k} ${'x'.repeat(400)}`, quantity: 1, unit_price_minor: 100 + (k === 3 ? i : 0), amount_minor: 100 + (k === 3 ? i : 0) });
  }
  await insertInBatches(server, 'cavalier_quotes', quotes);
  await insertInBatches(server, 'cavalier_quote_lines', lines);
  const accepted = quotes[5] as { id: string };
  const newest = quotes.at(-1) as { id: string };
  const total = Number(before) + 1_100;

  const { client, close } = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: ['cavalier.deals.read', 'cavalier.quotes.read', 'cavalier.sows.read'] });
  try {
    const read = (await client.callTool({ name: 'cavalier.get_deal', arguments: { deal_id: deal.id } })).structuredContent as any;
    t.is(read.quotes.length, DEAL_RECORDS_SHOWN);
    t.is(read.quotes_total, total);
    t.true(read.quotes_truncated);
    t.is(read.quotes[0].id, newest.id, 'newest first');
    t.false(read.sows_truncated);
    t.is(read.sows_total, read.sows.length);
    const resource = JSON.parse(((await client.readResource({ uri: `portico://cavalier/deals/${deal.id}` })).contents[0] as { text: string }).text);
    t.like(resource, { quotes_total: total, quotes_truncated: true });
    t.is(resource.quotes.length, DEAL_RECORDS_SHOWN);

    const prompt = await client.getPrompt({ name: 'cavalier.draft_sow_from_deal', arguments: { deal_id: deal.id } });
    const size = JSON.stringify(prompt).length;
    t.true(size < 1_000_000, `the prompt is ${size} characters`);
    const embedded = prompt.messages.flatMap((m) => (m.content.type === 'resource' ? [m.content.resource.uri] : []));
    t.deepEqual(embedded, [`portico://cavalier/deals/${deal.id}`, `portico://cavalier/quotes/${accepted.id}`]);
    const basis = prompt.messages[1].content as { resource: { text: string } };
    t.is(JSON.parse(basis.resource.text).line_items.length, 3, 'the basis comes with its line items');
    t.regex((prompt.messages.at(-1)!.content as { text: string }).text, new RegExp(`Base it on quote ${accepted.id} \\(accepted`));
  } finally {
    await close();
  }

  // Without the quotes scope, neither the quotes nor their count and cut are shown.
  const dealsOnly = await tool(t, server, 'cavalier', ['cavalier.deals.read'], 'cavalier.get_deal', { deal_id: deal.id });
  t.is(dealsOnly.quotes, undefined);
  t.is(dealsOnly.quotes_total, undefined);
  t.is(dealsOnly.quotes_truncated, undefined);
  t.is(dealsOnly.quotes_omitted, 'reading quotes needs the scope cavalier.quotes.read');
});

mcpTest('cavalier: without an accepted quote the draft is based on the newest', async (t, server) => {
  const deal = await server.db('cavalier_deals').where({ tenant_id: server.tenants.acme.id }).whereNot('stage', 'lost')
    .whereNotExists((q) => q.select(1).from('cavalier_quotes').whereRaw('cavalier_quotes.deal_id = cavalier_deals.id').where('status', 'accepted')).first();
  const make = (customer: string) => tool(t, server, 'cavalier', ['cavalier.quotes.write'], 'cavalier.create_quote', {
    deal_id: deal.id, currency: deal.currency, customer, line_items: [{ description: 'Work', quantity: 1, unit_price_minor: 100 }],
  });
  await make('First');
  await new Promise((resolve) => setTimeout(resolve, 5)); // a later created_at
  const second = await make('Second');
  const { client, close } = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: ['cavalier.deals.read', 'cavalier.quotes.read'] });
  try {
    const prompt = await client.getPrompt({ name: 'cavalier.draft_sow_from_deal', arguments: { deal_id: deal.id } });
    const embedded = prompt.messages.flatMap((m) => (m.content.type === 'resource' ? [m.content.resource.uri] : []));
    t.deepEqual(embedded, [`portico://cavalier/deals/${deal.id}`, `portico://cavalier/quotes/${second.id}`]);
  } finally {
    await close();
  }
});

mcpTest('people: a history of 620 events shows the newest 500, oldest first, with the total', async (t, server) => {
  const tenant = server.tenants.acme.id;
  const person = await server.db('people_profiles').where({ tenant_id: tenant }).first('id');
  const [{ last }] = await server.db('people_lifecycle_events').where({ person_id: person.id }).max({ last: 'sequence' });
  const events = Array.from({ length: 620 }, (_, i) => ({
    id: randomUUID(), tenant_id: tenant, person_id: person.id, sequence: Number(last) + i + 1, kind: 'profile_updated',
    detail: JSON.stringify({ changes: { location: { from: `room ${i}`, to: `room ${i + 1}` } } }), actor_user_id: null, at: Date.now() + i,
  }));
  await insertInBatches(server, 'people_lifecycle_events', events);
  const history = await tool(t, server, 'people', ['people.lifecycle.read'], 'people.get_person_history', { person_id: person.id });
  t.is(history.events.length, HISTORY_SHOWN);
  t.is(history.events_total, Number(last) + 620);
  t.true(history.events_truncated);
  t.is(history.events.at(-1).sequence, Number(last) + 620, 'the newest event is last');
  t.is(history.events[0].sequence, Number(last) + 620 - HISTORY_SHOWN + 1);
  t.true(history.events.every((e: { sequence: number }, i: number) => i === 0 || e.sequence === history.events[i - 1].sequence + 1), 'oldest first');
});

// ---- reclaim: 300 segments, simulated without reading them all

const MIN = 60_000;
const at = (ms: number) => new Date(ms).toISOString();

interface Segment { starts_at: number; ends_at: number | null; rpo_minutes: number }

/** Every snapshot, enumerated: what the simulation must agree with. */
function snapshotsOf(segments: Segment[], asOf: number): number[] {
  const all: number[] = [];
  for (const s of segments) {
    const end = Math.min(asOf, s.ends_at === null ? Infinity : s.ends_at - 1);
    for (let t = s.starts_at; t <= end; t += s.rpo_minutes * MIN) all.push(t);
  }
  return all.sort((a, b) => a - b);
}

mcpTest('reclaim: a policy with 300 schedule segments shows the newest 100, and simulations agree with every snapshot enumerated', async (t, server) => {
  const tenant = server.tenants.acme.id;
  const created = await tool(t, server, 'reclaim', ['reclaim.policies.write'], 'reclaim.create_policy', {
    name: 'Many segments', target_kind: 'database', target_name: 'busy-db', retention_days: 3, rpo_minutes: 60,
  });
  await server.db('reclaim_schedule_segments').where({ policy_id: created.id }).delete();
  // 300 segments over ~6 days: RPOs of 5-60 minutes, gaps (pauses), some shorter than their RPO,
  // and some empty (closed as they opened); the last one open.
  const segments: Segment[] = [];
  let cursor = Date.UTC(2026, 0, 1);
  for (let i = 0; i < 300; i++) {
    const rpo = [5, 15, 60, 30][i % 4];
    const length = i % 7 === 3 ? 0 : ((i * 37) % 50 + 1) * MIN;
    segments.push({ starts_at: cursor, ends_at: i === 299 ? null : cursor + length, rpo_minutes: rpo });
    cursor += length + (i % 5 === 0 ? 45 * MIN : 0);
  }
  await insertInBatches(server, 'reclaim_schedule_segments', segments.map((s) => ({ id: randomUUID(), tenant_id: tenant, policy_id: created.id, ...s })));
  await server.db('reclaim_retention_segments').where({ policy_id: created.id }).update({ starts_at: segments[0].starts_at });

  const read = await tool(t, server, 'reclaim', ['reclaim.policies.read'], 'reclaim.get_policy', { policy_id: created.id });
  t.is(read.schedule.length, SCHEDULE_SHOWN);
  t.is(read.schedule_total, 300);
  t.true(read.schedule_truncated);
  t.is(read.schedule.at(-1).ends_at, null, 'the current segment is last');
  t.is(read.schedule[0].starts_at, at(segments[200].starts_at));

  const { client, close } = await connect(server, { product: 'reclaim', tenant: 'acme', scopes: ['reclaim.policies.read'] });
  try {
    const first = segments[0].starts_at;
    for (const [asOfOffset, points] of [
      [2 * DAY_MS, [first - MIN, first, first + 7 * MIN, first + DAY_MS, first + 2 * DAY_MS - 1]],
      [5 * DAY_MS, [first + 3 * MIN, first + 2 * DAY_MS + 17 * MIN, first + 3 * DAY_MS + 1, first + 4 * DAY_MS + 59 * MIN, first + 6 * DAY_MS]],
      [9 * DAY_MS, [first + DAY_MS, first + 6 * DAY_MS + 11 * MIN, first + 8 * DAY_MS]],
    ] as Array<[number, number[]]>) {
      const asOf = first + asOfOffset;
      const all = snapshotsOf(segments, asOf);
      const cutoff = asOf - 3 * DAY_MS;
      const retained = all.filter((s) => s >= cutoff);
      for (const point of points) {
        const result = (await client.callTool({ name: 'reclaim.simulate_recovery', arguments: { policy_id: created.id, point_in_time: at(point), as_of: at(asOf) } })).structuredContent as any;
        const label = `point ${at(point)} as of ${at(asOf)}`;
        t.deepEqual(result.retention, {
          retention_days: 3, window_start: at(cutoff), retained_snapshots: retained.length, expired_snapshots: all.length - retained.length,
          earliest_recoverable_point: retained.length ? at(retained[0]) : null, latest_recoverable_point: retained.length ? at(retained.at(-1)!) : null,
        }, label);
        const best = all.filter((s) => s <= point).at(-1);
        if (point > asOf) t.is(result.outcome, 'in_the_future', label);
        else if (best === undefined) t.is(result.outcome, 'before_first_snapshot', label);
        else if (best < cutoff) t.like(result, { outcome: 'out_of_retention', expired_recovery_point: at(best) }, label);
        else t.like(result, { outcome: 'recoverable', recovery_point: at(best), data_loss_minutes: Math.round(((point - best) / MIN) * 1000) / 1000 }, label);
      }
    }
  } finally {
    await close();
  }
});

mcpTest('pawvault: 600 vaccines due list the 500 soonest with the total; years of replaced doses are not listed', async (t, server) => {
  const tenant = server.tenants.acme.id;
  const pet = await tool(t, server, 'pawvault', ['pawvault.pets.write'], 'pawvault.add_pet', { name: 'Many Doses', species: 'dog' });
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const dose = (vaccine: string, givenDaysAgo: number, dueInDays: number | null) => ({
    id: randomUUID(), tenant_id: tenant, pet_id: pet.id, vaccine, vaccine_key: vaccine, administered_on: today - givenDaysAgo * DAY_MS,
    due_on: dueInDays === null ? null : today + dueInDays * DAY_MS, clinic: null, notes: null, created_at: Date.now(),
  });
  const rows = [
    // 600 vaccines, each due within 20 days.
    ...Array.from({ length: 600 }, (_, i) => dose(`vaccine ${String(i).padStart(3, '0')}`, 300, i % 20)),
    // 1,000 old doses of one vaccine, each replaced by the next; the latest is not due for a year.
    ...Array.from({ length: 1_000 }, (_, i) => dose('rabies', 2_000 - i, -1_000 + i)),
    dose('rabies', 1, 364),
  ];
  await insertInBatches(server, 'pawvault_vaccinations', rows);
  const due = await tool(t, server, 'pawvault', ['pawvault.health.read'], 'pawvault.list_due_vaccinations', { pet_id: pet.id, within_days: 30 });
  t.is(due.due.length, DUE_SHOWN);
  t.is(due.due_total, 600);
  t.true(due.due_truncated);
  t.false(due.due.some((d: { vaccine: string }) => d.vaccine === 'rabies'), 'the replaced doses are not due');
  t.true(due.due.every((d: { days_until_due: number }, i: number) => i === 0 || d.days_until_due >= due.due[i - 1].days_until_due), 'soonest first');
  const soon = await tool(t, server, 'pawvault', ['pawvault.health.read'], 'pawvault.list_due_vaccinations', { pet_id: pet.id, within_days: 0, include_overdue: false });
  t.is(soon.due.length, 30);
  t.false(soon.due_truncated);
  t.is(soon.due_total, 30);
});
