/** cavalier through the MCP pipeline with a real SDK client, on every database. */
import { cavalier } from '../../mcp/products/cavalier/index.js';
import {
  assertConfirmationFlow, assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertRefusedUnconfirmed, assertToolError, callConfirmed,
  okConfirmed, productSuite,
} from './product_suite.js';

const each = productSuite('cavalier');
const ALL = Object.keys(cavalier.scopes);
const QUOTES = ['cavalier.quotes.read', 'cavalier.quotes.write'];
const DEALS = ['cavalier.deals.read', 'cavalier.deals.write'];
const SOWS = ['cavalier.sows.read', 'cavalier.sows.write'];
/** A calendar date `offset` days from today (UTC), so that dates the rules compare with today never go stale. */
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

each('every cavalier tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of cavalier.tools) {
    await assertInsufficientScope(t, env, 'cavalier', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each('create_quote computes line amounts, subtotal, tax (half up) and total on the server', async (t, env) => {
  const quote = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', {
    customer: 'Initech', currency: 'EUR', tax_rate_percent: 19,
    line_items: [
      { description: 'Consulting hour', quantity: 3, unit_price_minor: 1999 },
      { description: 'Travel flat fee', quantity: 2, unit_price_minor: 500 },
    ],
    valid_until: day(40),
  });
  t.is(quote.status, 'draft');
  t.deepEqual(quote.line_items.map((l: any) => l.amount_minor), [5997, 1000]);
  t.is(quote.subtotal_minor, 6997);
  t.is(quote.tax_minor, 1329); // 6997 × 0.19 = 1329.43
  t.is(quote.total_minor, 8326);
  t.is(quote.total, '83.26 EUR');
  t.is(quote.valid_until, day(40));
  t.deepEqual(quote.next_statuses, ['sent']);
  t.is(quote.uri, `portico://cavalier/quotes/${quote.id}`);

  const half = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', {
    customer: 'Initech', currency: 'EUR', tax_rate_percent: 7.25, line_items: [{ description: 'Widget', quantity: 1, unit_price_minor: 200 }],
  });
  t.is(half.tax_minor, 15); // 200 × 0.0725 = 14.5 → 15
  t.is(half.total_minor, 215);

  const yen = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', {
    customer: 'Nakatomi', currency: 'JPY', line_items: [{ description: 'Licence', quantity: 4, unit_price_minor: 12500 }],
  });
  t.is(yen.total, '50000 JPY');
  t.is(yen.tax_minor, 0);

  const read = await env.ok(t, 'acme', QUOTES, 'cavalier.get_quote', { quote_id: quote.id.toUpperCase() });
  t.is(read.id, quote.id);
  t.is(read.total_minor, 8326);
  t.deepEqual(read.line_items[0], { position: 1, description: 'Consulting hour', quantity: 3, unit_price_minor: 1999, amount_minor: 5997 });
});

each('create_quote refuses bad input naming the field, and writes nothing', async (t, env) => {
  const line = { description: 'x', quantity: 1, unit_price_minor: 100 };
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'eur', line_items: [line] }, 'currency');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'XYZ', line_items: [line] }, 'currency');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'EUR', line_items: [] }, 'line_items');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'EUR', line_items: [{ ...line, quantity: 0 }] }, 'line_items.0.quantity');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'EUR', line_items: [{ ...line, unit_price_minor: 1.5 }] }, 'line_items.0.unit_price_minor');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'EUR', line_items: [line], tax_rate_percent: 7.255 }, 'tax_rate_percent');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'EUR', line_items: [line], total_minor: 1 }, 'total_minor');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { currency: 'EUR', line_items: [line] }, 'customer');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'A', currency: 'EUR', line_items: [line], valid_until: '2026-02-30' }, 'valid_until');
  const [{ n }] = await env.server.db('cavalier_quotes').where({ tenant_id: env.server.tenants.acme.id, customer: 'A' }).count({ n: '*' });
  t.is(Number(n), 0);
});

each('quote statuses move draft → sent → accepted | rejected and nothing else', async (t, env) => {
  const quote = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'Umbrella', currency: 'USD', line_items: [{ description: 'Kit', quantity: 1, unit_price_minor: 1000 }] });
  const skipped = await assertRefusedUnconfirmed(t, env, 'acme', QUOTES, 'cavalier.record_quote_decision', { quote_id: quote.id, decision: 'accepted' }, 'conflict');
  t.regex(skipped.message, /draft and cannot move to accepted: it can move to sent/);
  t.deepEqual(skipped.details.allowed, ['sent']);

  const sent = await env.ok(t, 'acme', QUOTES, 'cavalier.update_quote_status', { quote_id: quote.id, status: 'sent' });
  t.is(sent.status, 'sent');
  t.is(sent.previous_status, 'draft');
  t.truthy(sent.sent_at);
  const accepted = await okConfirmed(t, env, 'acme', QUOTES, 'cavalier.record_quote_decision', { quote_id: quote.id, decision: 'accepted' });
  t.is(accepted.status, 'accepted');
  t.is(accepted.previous_status, 'sent');
  t.truthy(accepted.decided_at);
  const final = await assertRefusedUnconfirmed(t, env, 'acme', QUOTES, 'cavalier.record_quote_decision', { quote_id: quote.id, decision: 'rejected' }, 'conflict');
  t.regex(final.message, /accepted is final/);
  t.is((await env.ok(t, 'acme', QUOTES, 'cavalier.get_quote', { quote_id: quote.id })).status, 'accepted');
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.update_quote_status', { quote_id: quote.id, status: 'won' }, 'status');
});

each('an accepted quote is a commercial record: delete_quote refuses it before asking anyone to confirm', async (t, env) => {
  const quote = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'Vandelay', currency: 'USD', line_items: [{ description: 'Latex', quantity: 1, unit_price_minor: 700 }] });
  await env.ok(t, 'acme', QUOTES, 'cavalier.update_quote_status', { quote_id: quote.id, status: 'sent' });
  await okConfirmed(t, env, 'acme', QUOTES, 'cavalier.record_quote_decision', { quote_id: quote.id, decision: 'accepted' });
  const kept = await assertRefusedUnconfirmed(t, env, 'acme', QUOTES, 'cavalier.delete_quote', { quote_id: quote.id }, 'conflict');
  t.regex(kept.message, /accepted by the customer and is kept as a record/);
  t.truthy(await env.server.db('cavalier_quotes').where({ id: quote.id }).first());
});

each('delete_quote follows the confirmation protocol', async (t, env) => {
  const quote = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'Soylent', currency: 'EUR', line_items: [{ description: 'Sample', quantity: 2, unit_price_minor: 300 }] });
  const done = await assertConfirmationFlow(t, env, 'acme', QUOTES, 'cavalier.delete_quote', { quote_id: quote.id }, {
    sentence: new RegExp(`Quote ${quote.id} and all of its line items will be permanently deleted`),
    unchanged: async () => {
      t.truthy(await env.server.db('cavalier_quotes').where({ id: quote.id }).first());
      t.is((await env.server.db('cavalier_quote_lines').where({ quote_id: quote.id })).length, 1);
    },
  });
  t.like(done, { deleted: true, id: quote.id, customer: 'Soylent', line_items_deleted: 1, total: '6.00 EUR' });
  t.falsy(await env.server.db('cavalier_quotes').where({ id: quote.id }).first());
  t.is((await env.server.db('cavalier_quote_lines').where({ quote_id: quote.id })).length, 0);
});

each('list_quotes filters by status, deal and customer and pages with a cursor', async (t, env) => {
  const deal = await env.ok(t, 'globex', DEALS, 'cavalier.create_deal', { title: 'Paging deal', customer: 'Pagination GmbH', currency: 'EUR', value_minor: 100_000 });
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    ids.push((await env.ok(t, 'globex', QUOTES, 'cavalier.create_quote', { deal_id: deal.id, currency: 'EUR', line_items: [{ description: `Item ${i}`, quantity: 1, unit_price_minor: 100 * (i + 1) }] })).id);
  }
  await env.ok(t, 'globex', QUOTES, 'cavalier.update_quote_status', { quote_id: ids[0], status: 'sent' });
  const byDeal = await env.ok(t, 'globex', QUOTES, 'cavalier.list_quotes', { deal_id: deal.id });
  t.deepEqual(byDeal.quotes.map((q: any) => q.id).sort(), [...ids].sort());
  t.true(byDeal.quotes.every((q: any) => q.customer === 'Pagination GmbH'), 'customer defaults to the deal\'s');
  const sent = await env.ok(t, 'globex', QUOTES, 'cavalier.list_quotes', { deal_id: deal.id, status: 'sent' });
  t.deepEqual(sent.quotes.map((q: any) => q.id), [ids[0]]);
  const byCustomer = await env.ok(t, 'globex', QUOTES, 'cavalier.list_quotes', { customer: 'paginATION' });
  t.is(byCustomer.quotes.length, 3);

  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.ok(t, 'globex', QUOTES, 'cavalier.list_quotes', { deal_id: deal.id, limit: 2, ...(cursor ? { cursor } : {}) });
    t.true(page.quotes.length <= 2);
    seen.push(...page.quotes.map((q: any) => q.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  t.deepEqual([...seen].sort(), [...ids].sort());
  t.is(new Set(seen).size, 3);
  await assertInvalidArguments(t, env, 'globex', QUOTES, 'cavalier.list_quotes', { cursor: 'not-a-cursor' }, 'cursor');
  await assertInvalidArguments(t, env, 'globex', QUOTES, 'cavalier.list_quotes', { limit: 101 }, 'limit');
});

each('a quote for a deal must use the deal\'s currency', async (t, env) => {
  const deal = await env.ok(t, 'acme', DEALS, 'cavalier.create_deal', { title: 'USD deal', customer: 'Hooli', currency: 'USD', value_minor: 5000 });
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.create_quote', { deal_id: deal.id, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price_minor: 1 }] }, 'currency');
});

each('deals move one stage at a time, lost from any open stage; won and lost are final', async (t, env) => {
  const deal = await env.ok(t, 'acme', DEALS, 'cavalier.create_deal', {
    title: 'Data platform', customer: 'Massive Dynamic', currency: 'USD', value_minor: 12_000_000, expected_close_date: day(52),
  });
  t.like(deal, { stage: 'lead', value: '120000.00 USD', expected_close_date: day(52) });
  t.deepEqual(deal.next_stages, ['qualified', 'lost']);
  const skip = await assertRefusedUnconfirmed(t, env, 'acme', DEALS, 'cavalier.close_deal', { deal_id: deal.id, outcome: 'won' }, 'conflict');
  t.regex(skip.message, /lead and cannot move to won: it can move to qualified or lost/);
  await env.ok(t, 'acme', DEALS, 'cavalier.update_deal_stage', { deal_id: deal.id, stage: 'qualified' });
  const back = await assertToolError(t, env, 'acme', DEALS, 'cavalier.update_deal_stage', { deal_id: deal.id, stage: 'lead' }, 'conflict');
  t.deepEqual(back.allowed, ['proposal', 'lost']);
  const proposal = await env.ok(t, 'acme', DEALS, 'cavalier.update_deal_stage', { deal_id: deal.id, stage: 'proposal' });
  t.like(proposal, { stage: 'proposal', previous_stage: 'qualified', closed_at: null });
  const won = await okConfirmed(t, env, 'acme', DEALS, 'cavalier.close_deal', { deal_id: deal.id, outcome: 'won' });
  t.like(won, { stage: 'won', previous_stage: 'proposal' });
  t.truthy(won.closed_at);
  await assertRefusedUnconfirmed(t, env, 'acme', DEALS, 'cavalier.close_deal', { deal_id: deal.id, outcome: 'lost' }, 'conflict');

  const listed = await env.ok(t, 'acme', DEALS, 'cavalier.list_deals', { stage: 'won', customer: 'massive' });
  t.deepEqual(listed.deals.map((d: any) => d.id), [deal.id]);
  await assertInvalidArguments(t, env, 'acme', DEALS, 'cavalier.create_deal', { title: 'x', customer: 'y', currency: 'USD', value_minor: 1, stage: 'won' }, 'stage');
  await assertInvalidArguments(t, env, 'acme', DEALS, 'cavalier.create_deal', { title: '', customer: 'y', currency: 'USD', value_minor: 1 }, 'title');
  await assertInvalidArguments(t, env, 'acme', DEALS, 'cavalier.create_deal', { title: 'x', customer: 'y', currency: 'USD', value_minor: -1 }, 'value_minor');
});

each('a statement of work is created from a deal at proposal or won, with milestones summed by the server', async (t, env) => {
  const deal = await env.ok(t, 'globex', DEALS, 'cavalier.create_deal', { title: 'Plant retrofit', customer: 'Cypress Creek', currency: 'EUR', value_minor: 900_000 });
  const milestones = [
    { title: 'Survey', due_date: day(70), amount_minor: 250_000 },
    { title: 'Delivery', due_date: day(130), amount_minor: 650_050 },
  ];
  const early = await assertToolError(t, env, 'globex', SOWS, 'cavalier.create_sow', { deal_id: deal.id, title: 'Too early', scope_summary: 'x', milestones }, 'conflict');
  t.regex(early.message, /stage lead; a statement of work needs a deal at proposal or won/);
  await env.ok(t, 'globex', DEALS, 'cavalier.update_deal_stage', { deal_id: deal.id, stage: 'qualified' });
  await env.ok(t, 'globex', DEALS, 'cavalier.update_deal_stage', { deal_id: deal.id, stage: 'proposal' });

  const sow = await env.ok(t, 'globex', SOWS, 'cavalier.create_sow', { deal_id: deal.id, title: 'Retrofit SOW', scope_summary: 'Survey and deliver. Civil works out of scope.', milestones });
  t.like(sow, { deal_id: deal.id, status: 'draft', currency: 'EUR', total_minor: 900_050, total: '9000.50 EUR' });
  t.deepEqual(sow.milestones.map((m: any) => [m.position, m.title, m.due_date, m.amount_minor]), [[1, 'Survey', day(70), 250_000], [2, 'Delivery', day(130), 650_050]]);
  const listed = await env.ok(t, 'globex', SOWS, 'cavalier.list_sows', { deal_id: deal.id });
  t.deepEqual(listed.sows.map((s: any) => s.id), [sow.id]);
  const read = await env.ok(t, 'globex', SOWS, 'cavalier.get_sow', { sow_id: sow.id });
  t.is(read.scope_summary, 'Survey and deliver. Civil works out of scope.');

  await assertRefusedUnconfirmed(t, env, 'globex', SOWS, 'cavalier.complete_sow', { sow_id: sow.id }, 'conflict');
  t.like(await env.ok(t, 'globex', SOWS, 'cavalier.update_sow_status', { sow_id: sow.id, status: 'signed' }), { status: 'signed', previous_status: 'draft' });
  const withSow = await env.ok(t, 'globex', [...DEALS, 'cavalier.sows.read'], 'cavalier.get_deal', { deal_id: deal.id });
  t.deepEqual(withSow.sows.map((s: any) => [s.id, s.status]), [[sow.id, 'signed']]);
  t.is((await env.ok(t, 'globex', DEALS, 'cavalier.get_deal', { deal_id: deal.id })).sows_omitted, 'reading sows needs the scope cavalier.sows.read');

  await assertInvalidArguments(t, env, 'globex', SOWS, 'cavalier.create_sow', { deal_id: deal.id, title: 'x', scope_summary: 'y', milestones: [] }, 'milestones');
  await assertInvalidArguments(t, env, 'globex', SOWS, 'cavalier.create_sow', { deal_id: deal.id, title: 'x', scope_summary: 'y', milestones: [{ ...milestones[0], due_date: '1 Feb 2027' }] }, 'milestones.0.due_date');
});

each('a new deal cannot be expected to close, nor a new statement of work\'s milestone fall due, before today', async (t, env) => {
  const deal = { title: 'Backdated', customer: 'Initrode', currency: 'USD', value_minor: 10_000 };
  const past = await t.throwsAsync((await env.client('acme', DEALS)).callTool({ name: 'cavalier.create_deal', arguments: { ...deal, expected_close_date: day(-1) } }));
  t.regex(past!.message, new RegExp(`expected_close_date: ${day(-1)} has passed`));
  await assertInvalidArguments(t, env, 'acme', DEALS, 'cavalier.create_deal', { ...deal, expected_close_date: day(-400) }, 'expected_close_date');
  const [{ n }] = await env.server.db('cavalier_deals').where({ tenant_id: env.server.tenants.acme.id, title: 'Backdated' }).count({ n: '*' });
  t.is(Number(n), 0, 'nothing was written');
  t.is((await env.ok(t, 'acme', DEALS, 'cavalier.create_deal', { ...deal, expected_close_date: day(0) })).expected_close_date, day(0), 'closing today is fine');

  const open = await env.ok(t, 'acme', DEALS, 'cavalier.create_deal', { ...deal, title: 'Backdated SOW deal', stage: 'proposal' });
  const sow = { deal_id: open.id, title: 'Backdated SOW', scope_summary: 'Work that would already be late.' };
  const milestone = (title: string, offset: number) => ({ title, due_date: day(offset), amount_minor: 1_000 });
  await assertInvalidArguments(t, env, 'acme', SOWS, 'cavalier.create_sow', { ...sow, milestones: [milestone('Kick-off', -1)] }, 'milestones.0.due_date');
  await assertInvalidArguments(t, env, 'acme', SOWS, 'cavalier.create_sow', { ...sow, milestones: [milestone('Kick-off', 5), milestone('Hand-over', -3)] }, 'milestones.1.due_date');
  // In delivery order: a milestone due before the one it follows is refused; two on the same day are fine.
  await assertInvalidArguments(t, env, 'acme', SOWS, 'cavalier.create_sow', { ...sow, milestones: [milestone('Kick-off', 5), milestone('Build', 20), milestone('Hand-over', 10)] }, 'milestones.2.due_date');
  t.deepEqual((await env.ok(t, 'acme', SOWS, 'cavalier.list_sows', { deal_id: open.id })).sows, [], 'nothing was written');
  const today = await env.ok(t, 'acme', SOWS, 'cavalier.create_sow', { ...sow, milestones: [milestone('Kick-off', 0), milestone('Review', 30), milestone('Hand-over', 30)] });
  t.deepEqual(today.milestones.map((m: any) => m.due_date), [day(0), day(30), day(30)]);
});

each('final moves (a quote\'s decision, closing a deal, completing a statement of work) ask for confirmation; the update tools refuse them', async (t, env) => {
  for (const name of ['cavalier.record_quote_decision', 'cavalier.close_deal', 'cavalier.complete_sow']) {
    t.true(cavalier.tools.find((tool) => tool.name === name)?.destructive === true, `${name} is destructive`);
  }
  for (const name of ['cavalier.update_quote_status', 'cavalier.update_deal_stage', 'cavalier.update_sow_status']) {
    t.true(cavalier.tools.find((tool) => tool.name === name)?.destructive === false, `${name} only makes moves that leave the record open`);
  }

  const quote = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', { customer: 'Cyberdyne', currency: 'USD', line_items: [{ description: 'Chip', quantity: 1, unit_price_minor: 900 }] });
  await env.ok(t, 'acme', QUOTES, 'cavalier.update_quote_status', { quote_id: quote.id, status: 'sent' });
  await assertInvalidArguments(t, env, 'acme', QUOTES, 'cavalier.update_quote_status', { quote_id: quote.id, status: 'rejected' }, 'status');
  const rejected = await callConfirmed(t, env, 'acme', QUOTES, 'cavalier.record_quote_decision', { quote_id: quote.id, decision: 'rejected' }, {
    sentence: new RegExp(`Quote ${quote.id} will be recorded as rejected by the customer`),
    unchanged: async () => {
      t.is((await env.server.db('cavalier_quotes').where({ id: quote.id }).first()).status, 'sent');
    },
  });
  t.false(rejected.isError, JSON.stringify(rejected.structured));
  t.like(rejected.structured, { status: 'rejected', previous_status: 'sent', next_statuses: [] });

  const deal = await env.ok(t, 'acme', DEALS, 'cavalier.create_deal', { title: 'Skynet upgrade', customer: 'Cyberdyne', currency: 'USD', value_minor: 50_000 });
  await assertInvalidArguments(t, env, 'acme', DEALS, 'cavalier.update_deal_stage', { deal_id: deal.id, stage: 'lost' }, 'stage');
  const lost = await callConfirmed(t, env, 'acme', DEALS, 'cavalier.close_deal', { deal_id: deal.id, outcome: 'lost' }, {
    sentence: new RegExp(`Deal ${deal.id} will be closed as lost`),
    unchanged: async () => {
      t.like(await env.server.db('cavalier_deals').where({ id: deal.id }).first(), { stage: 'lead', closed_at: null });
    },
  });
  t.false(lost.isError, JSON.stringify(lost.structured));
  t.like(lost.structured, { stage: 'lost', previous_stage: 'lead', next_stages: [] });
  t.truthy(lost.structured.closed_at);

  const proposal = await env.ok(t, 'acme', DEALS, 'cavalier.create_deal', { title: 'T-800 pilot', customer: 'Cyberdyne', currency: 'USD', value_minor: 70_000, stage: 'proposal' });
  const sow = await env.ok(t, 'acme', SOWS, 'cavalier.create_sow', {
    deal_id: proposal.id, title: 'Pilot', scope_summary: 'One unit.', milestones: [{ title: 'Delivery', due_date: day(20), amount_minor: 70_000 }],
  });
  await env.ok(t, 'acme', SOWS, 'cavalier.update_sow_status', { sow_id: sow.id, status: 'signed' });
  await assertInvalidArguments(t, env, 'acme', SOWS, 'cavalier.update_sow_status', { sow_id: sow.id, status: 'completed' }, 'status');
  const completed = await callConfirmed(t, env, 'acme', SOWS, 'cavalier.complete_sow', { sow_id: sow.id }, {
    sentence: new RegExp(`Statement of work ${sow.id} will be marked completed`),
    unchanged: async () => {
      t.is((await env.server.db('cavalier_sows').where({ id: sow.id }).first()).status, 'signed');
    },
  });
  t.false(completed.isError, JSON.stringify(completed.structured));
  t.like(completed.structured, { status: 'completed', previous_status: 'signed', next_statuses: [] });
});

each('ids of another tenant are forbidden_cross_tenant; unknown ids are not_found', async (t, env) => {
  const foreign = await env.ok(t, 'globex', [...QUOTES, ...DEALS], 'cavalier.list_quotes', {});
  const foreignQuote = foreign.quotes[0].id;
  await assertCrossTenant(t, env, 'cavalier', 'acme', QUOTES, 'cavalier.get_quote', { quote_id: foreignQuote });
  await assertCrossTenant(t, env, 'cavalier', 'acme', QUOTES, 'cavalier.delete_quote', { quote_id: foreignQuote, confirmed: true });
  t.truthy(await env.server.db('cavalier_quotes').where({ id: foreignQuote }).first());
  const foreignDeal = (await env.ok(t, 'globex', DEALS, 'cavalier.list_deals', {})).deals[0].id;
  await assertCrossTenant(t, env, 'cavalier', 'acme', ['cavalier.sows.write'], 'cavalier.create_sow', {
    deal_id: foreignDeal, title: 'x', scope_summary: 'y', milestones: [{ title: 'm', due_date: '2027-01-01', amount_minor: 1 }],
  });
  const missing = await assertToolError(t, env, 'acme', QUOTES, 'cavalier.get_quote', { quote_id: '00000000-0000-4000-8000-000000000000' }, 'not_found');
  t.regex(missing.message, /no quote/);
});

each('quote, deal and sow resources and the draft_sow_from_deal prompt work end to end', async (t, env) => {
  const client = await env.client('acme', ALL);
  const deals = await env.ok(t, 'acme', ALL, 'cavalier.list_deals', { stage: 'won' });
  const deal = deals.deals.find((d: any) => d.title === 'Warehouse robotics retrofit');
  t.truthy(deal, 'the acme demo deal');
  const full = await env.ok(t, 'acme', ALL, 'cavalier.get_deal', { deal_id: deal.id });
  const accepted = full.quotes.find((q: any) => q.status === 'accepted');
  t.is(accepted.subtotal_minor, 4 * 3_200_000 + 12 * 180_000 + 8 * 45_000);

  const templates = await client.listResourceTemplates();
  t.deepEqual(templates.resourceTemplates.map((r) => r.uriTemplate).sort(), ['portico://cavalier/deals/{id}', 'portico://cavalier/quotes/{id}', 'portico://cavalier/sows/{id}']);
  const quote = JSON.parse(((await client.readResource({ uri: `portico://cavalier/quotes/${accepted.id}` })).contents[0] as { text: string }).text);
  t.is(quote.total_minor, accepted.total_minor);
  t.is(quote.line_items.length, 3);
  const dealRead = JSON.parse(((await client.readResource({ uri: `portico://cavalier/deals/${deal.id}` })).contents[0] as { text: string }).text);
  t.is(dealRead.customer, 'Road Runner Logistics');
  const sowRead = JSON.parse(((await client.readResource({ uri: `portico://cavalier/sows/${full.sows[0].id}` })).contents[0] as { text: string }).text);
  t.is(sowRead.milestones.length, 3);

  const prompt = await client.getPrompt({ name: 'cavalier.draft_sow_from_deal', arguments: { deal_id: deal.id } });
  const texts = prompt.messages.map((m) => (m.content.type === 'text' ? m.content.text : m.content.type === 'resource' ? (m.content.resource as { text: string }).text : ''));
  t.true(texts.some((text) => text.includes('Road Runner Logistics')));
  t.true(texts.some((text) => text.includes(`must add up to its subtotal of ${accepted.subtotal_minor} minor units of USD`)));
  t.true(texts.some((text) => text.includes(`cavalier.create_sow and deal_id ${deal.id}`)));

  // Another tenant's deal is refused in a prompt and a resource too.
  const foreignDeal = (await env.ok(t, 'globex', DEALS, 'cavalier.list_deals', {})).deals[0].id;
  await t.throwsAsync(client.getPrompt({ name: 'cavalier.draft_sow_from_deal', arguments: { deal_id: foreignDeal } }), { message: /another organization/ });
  await t.throwsAsync(client.readResource({ uri: `portico://cavalier/deals/${foreignDeal}` }), { message: /another organization/ });
});

each('the demo data differs between acme and globex', async (t, env) => {
  const acme = await env.ok(t, 'acme', DEALS, 'cavalier.list_deals', {});
  const globex = await env.ok(t, 'globex', DEALS, 'cavalier.list_deals', {});
  const titles = (page: any) => page.deals.map((d: any) => d.title);
  t.true(titles(acme).includes('Anvil supply contract 2027'));
  t.false(titles(globex).includes('Anvil supply contract 2027'));
  t.true(titles(globex).includes('Plant automation audit'));
});

each('a quote of a lost deal is not sent or accepted any more; it can still be rejected', async (t, env) => {
  // create_quote refuses a lost deal ("nothing more is offered on it"), but a quote made while the
  // deal was open could still be sent, and accepted, after the deal was closed as lost.
  const both = [...QUOTES, ...DEALS];
  const deal = await env.ok(t, 'acme', DEALS, 'cavalier.create_deal', { title: 'Lost after quoting', customer: 'Initech', currency: 'EUR', value_minor: 5_000 });
  const quote = (lines: number) => env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', {
    deal_id: deal.id, currency: 'EUR', line_items: [{ description: 'TPS reports', quantity: lines, unit_price_minor: 100 }],
  });
  const draft = await quote(1);
  const sent = await quote(2);
  const toReject = await quote(3);
  for (const id of [sent.id, toReject.id]) await env.ok(t, 'acme', QUOTES, 'cavalier.update_quote_status', { quote_id: id, status: 'sent' });
  const next = async (id: string) => (await env.ok(t, 'acme', QUOTES, 'cavalier.get_quote', { quote_id: id })).next_statuses;
  t.deepEqual([await next(draft.id), await next(sent.id)], [['sent'], ['accepted', 'rejected']]);
  await okConfirmed(t, env, 'acme', DEALS, 'cavalier.close_deal', { deal_id: deal.id, outcome: 'lost' });
  // Every view of a quote offers only the moves the tools would make now.
  t.deepEqual([await next(draft.id), await next(sent.id)], [[], ['rejected']]);
  const listed = await env.ok(t, 'acme', QUOTES, 'cavalier.list_quotes', { deal_id: deal.id });
  t.deepEqual(Object.fromEntries(listed.quotes.map((q: any) => [q.id, q.next_statuses])), { [draft.id]: [], [sent.id]: ['rejected'], [toReject.id]: ['rejected'] });
  const ofDeal = await env.ok(t, 'acme', both, 'cavalier.get_deal', { deal_id: deal.id });
  t.deepEqual(Object.fromEntries(ofDeal.quotes.map((q: any) => [q.id, q.next_statuses])), { [draft.id]: [], [sent.id]: ['rejected'], [toReject.id]: ['rejected'] });

  const refusedSend = await assertToolError(t, env, 'acme', both, 'cavalier.update_quote_status', { quote_id: draft.id, status: 'sent' }, 'conflict');
  t.regex(refusedSend.message, /was lost/);
  const refusedAccept = await assertRefusedUnconfirmed(t, env, 'acme', both, 'cavalier.record_quote_decision', { quote_id: sent.id, decision: 'accepted' }, 'conflict');
  t.regex(refusedAccept.message, /was lost/);
  const statuses = async () => (await env.server.db('cavalier_quotes').whereIn('id', [draft.id, sent.id, toReject.id]).orderBy('total_minor')).map((q: any) => q.status);
  t.deepEqual(await statuses(), ['draft', 'sent', 'sent'], 'nothing was changed');
  const rejected = await okConfirmed(t, env, 'acme', both, 'cavalier.record_quote_decision', { quote_id: toReject.id, decision: 'rejected' });
  t.like(rejected, { status: 'rejected', previous_status: 'sent' });
  t.deepEqual(await statuses(), ['draft', 'sent', 'rejected']);
});

each('a sent quote past its last valid day offers only rejected next, as record_quote_decision refuses accepting it', async (t, env) => {
  const both = [...QUOTES, ...DEALS];
  const quote = await env.ok(t, 'acme', QUOTES, 'cavalier.create_quote', {
    customer: 'Initech', currency: 'EUR', valid_until: day(1), line_items: [{ description: 'Staplers', quantity: 1, unit_price_minor: 100 }],
  });
  const sent = await env.ok(t, 'acme', QUOTES, 'cavalier.update_quote_status', { quote_id: quote.id, status: 'sent' });
  t.deepEqual(sent.next_statuses, ['accepted', 'rejected']);
  // Its last valid day was yesterday (no tool writes a past one).
  await env.server.db('cavalier_quotes').where({ id: quote.id }).update({ valid_until: Date.parse(`${day(-1)}T00:00:00Z`) });
  t.deepEqual((await env.ok(t, 'acme', QUOTES, 'cavalier.get_quote', { quote_id: quote.id })).next_statuses, ['rejected']);
  const refused = await assertRefusedUnconfirmed(t, env, 'acme', both, 'cavalier.record_quote_decision', { quote_id: quote.id, decision: 'accepted' }, 'conflict');
  t.regex(refused.message, /expired/);
});
