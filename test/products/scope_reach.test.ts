/**
 * A prompt or resource declares one scope. What it shows that another scope guards (a deal's
 * quotes, a scan's findings, NDA-only documents, a person's profile) it shows only to grants that
 * hold that scope too, as the tool that reads the same data would (SPEC.md 1.4: the grant's scopes
 * decide what a connection can see).
 */
import { grant, mcpTest, openSession, rawCall, type McpTestServer } from '../helpers/mcp.js';

async function session(server: McpTestServer, product: string, scopes: string[]) {
  const { token } = await grant(server, { product, tenant: 'acme', scopes });
  const sessionId = await openSession(server, token, product);
  return (method: string, params: unknown) => rawCall(server, token, product, method, params, { sessionId });
}

mcpTest('cavalier: drafting a SOW from a deal shows its quotes only to grants that may read quotes', async (t, server) => {
  const deal = await server.db('cavalier_deals').where({ tenant_id: server.tenants.acme.id })
    .whereExists((q) => q.select(1).from('cavalier_quotes').whereRaw('cavalier_quotes.deal_id = cavalier_deals.id')).first('id');
  t.truthy(deal, 'the demo has a deal with a quote');
  const prompt = (scopes: string[]) => session(server, 'cavalier', scopes).then((call) => call('prompts/get', { name: 'cavalier.draft_sow_from_deal', arguments: { deal_id: deal.id } }));
  const dealsOnly = await prompt(['cavalier.deals.read']);
  t.is(dealsOnly.status, 200, dealsOnly.text);
  const text = JSON.stringify(dealsOnly.body.result);
  t.false(text.includes('/quotes/'), 'no quote resource is embedded');
  t.regex(text, /may not read them \(cavalier\.quotes\.read\)/);
  const both = JSON.stringify((await prompt(['cavalier.deals.read', 'cavalier.quotes.read'])).body.result);
  t.true(both.includes('/quotes/'), 'with the quotes scope the quotes are embedded');
});

mcpTest('aegis: a scan read as a resource carries its findings only for grants that may read findings', async (t, server) => {
  const scan = await server.db('aegis_scans').where({ tenant_id: server.tenants.acme.id }).first('id');
  t.truthy(scan, 'the demo has a scan');
  const read = async (scopes: string[]) => {
    const response = await (await session(server, 'aegis', scopes))('resources/read', { uri: `portico://aegis/scans/${scan.id}` });
    t.is(response.status, 200, response.text);
    return JSON.parse(response.body.result.contents[0].text) as Record<string, unknown>;
  };
  const scansOnly = await read(['aegis.scans.read']);
  t.is(scansOnly.findings, undefined);
  t.regex(String(scansOnly.findings_omitted), /aegis\.findings\.read/);
  const both = await read(['aegis.scans.read', 'aegis.findings.read']);
  t.true(Array.isArray(both.findings) && both.findings.length > 0);
});

mcpTest('herald: reviewing a broadcast lists NDA-only documents only for grants that may read the trust center', async (t, server) => {
  const broadcast = await server.db('herald_broadcasts').where({ tenant_id: server.tenants.acme.id }).first('id');
  const nda = await server.db('herald_documents').where({ tenant_id: server.tenants.acme.id, visibility: 'nda', status: 'published' }).first('title');
  t.truthy(broadcast && nda, 'the demo has a broadcast and a published NDA-only document');
  const review = async (scopes: string[]) => JSON.stringify((await (await session(server, 'herald', scopes))('prompts/get', { name: 'herald.review_broadcast', arguments: { broadcast_id: broadcast.id } })).body.result);
  const broadcastsOnly = await review(['herald.broadcasts.read']);
  t.false(broadcastsOnly.includes(nda.title));
  t.regex(broadcastsOnly, /NDA-only documents are not shown/);
  t.true((await review(['herald.broadcasts.read', 'herald.trust.read'])).includes(nda.title));
});

mcpTest('people: planning an onboarding shows the profile, so it needs the profile scope', async (t, server) => {
  const person = await server.db('people_profiles').where({ tenant_id: server.tenants.acme.id }).first('id');
  const plan = async (scopes: string[]) => (await session(server, 'people', scopes))('prompts/get', { name: 'people.plan_onboarding', arguments: { person_id: person.id } });
  const lifecycleOnly = await plan(['people.lifecycle.read']);
  t.is(lifecycleOnly.status, 403);
  t.is(lifecycleOnly.body.error.data.code, 'insufficient_scope');
  t.is((await plan(['people.profiles.read'])).status, 200);
});

// ---- business rules found by this session's product review -------------------------------------

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** Tool calls on one connection (a confirmation belongs to the connection that was asked). */
async function caller(server: McpTestServer, product: string, scopes: string[]) {
  const send = await session(server, product, scopes);
  return async (name: string, args: Record<string, unknown>): Promise<{ error?: any; result?: any }> => {
    const response = await send('tools/call', { name, arguments: args });
    return response.body.error ? { error: response.body.error } : { result: response.body.result };
  };
}

mcpTest('people: a last day before the start date is refused, and the person stays as they were', async (t, server) => {
  const person = await server.db('people_profiles').where({ tenant_id: server.tenants.acme.id }).whereNot('status', 'offboarded').first('id');
  await server.db('people_profiles').where({ id: person.id }).update({ start_date: Date.parse(`${day(30)}T00:00:00Z`) });
  const args = { person_id: person.id, last_day: day(29), reason: 'a mistake', confirmed: true };
  const call = await caller(server, 'people', ['people.lifecycle.write']);
  t.is((await call('people.offboard_person', { ...args, confirmed: undefined })).result?.structuredContent.code, 'confirmation_required');
  const refused = await call('people.offboard_person', args);
  t.is(refused.error?.data.code, 'invalid_arguments', JSON.stringify(refused));
  t.is(refused.error.data.field, 'last_day');
  t.not((await server.db('people_profiles').where({ id: person.id }).first('status')).status, 'offboarded');
});

mcpTest('pawvault: a booster spelled with other spacing or case replaces the earlier dose', async (t, server) => {
  const pet = await server.db('pawvault_pets').where({ tenant_id: server.tenants.acme.id }).first('id');
  const call = await caller(server, 'pawvault', ['pawvault.health.write', 'pawvault.health.read']);
  t.truthy((await call('pawvault.record_vaccination', { pet_id: pet.id, vaccine: 'Kennel Cough', administered_on: day(-400), due_on: day(-30) })).result);
  t.truthy((await call('pawvault.record_vaccination', { pet_id: pet.id, vaccine: 'kennel   COUGH', administered_on: day(-10), due_on: day(355) })).result);
  const due = await call('pawvault.list_due_vaccinations', { pet_id: pet.id, within_days: 10 });
  const names = JSON.stringify(due.result.structuredContent).toLowerCase();
  t.false(names.includes('kennel'), names);
});

mcpTest('cavalier: an offer cannot be created already expired, nor accepted after its last valid day', async (t, server) => {
  const call = await caller(server, 'cavalier', ['cavalier.quotes.write', 'cavalier.quotes.read']);
  const quote = { customer: 'Initech', currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price_minor: 100 }] };
  const expired = await call('cavalier.create_quote', { ...quote, valid_until: day(-1) });
  t.is(expired.error?.data.code, 'invalid_arguments');
  t.is(expired.error.data.field, 'valid_until');
  t.truthy((await call('cavalier.create_quote', { ...quote, valid_until: day(0) })).result, 'valid through today');
  const created = await call('cavalier.create_quote', { ...quote, valid_until: day(10) });
  const id = created.result.structuredContent.id as string;
  t.truthy((await call('cavalier.update_quote_status', { quote_id: id, status: 'sent' })).result);
  await server.db('cavalier_quotes').where({ id }).update({ valid_until: Date.parse(`${day(-1)}T00:00:00Z`) }); // time passes
  const accept = { quote_id: id, decision: 'accepted' };
  t.is((await call('cavalier.record_quote_decision', accept)).result?.structuredContent.code, 'confirmation_required');
  const accepted = await call('cavalier.record_quote_decision', { ...accept, confirmed: true });
  t.is(accepted.result?.structuredContent?.code, 'conflict', JSON.stringify(accepted));
  t.regex(accepted.result.structuredContent.message, /expired on/);
  const reject = { quote_id: id, decision: 'rejected' };
  t.is((await call('cavalier.record_quote_decision', reject)).result?.structuredContent.code, 'confirmation_required');
  t.truthy((await call('cavalier.record_quote_decision', { ...reject, confirmed: true })).result.structuredContent.status === 'rejected');
});

mcpTest('cavalier: no quote is made for a lost deal', async (t, server) => {
  const call = await caller(server, 'cavalier', ['cavalier.quotes.write', 'cavalier.deals.write', 'cavalier.deals.read']);
  const deal = await call('cavalier.create_deal', { title: 'Lost cause', customer: 'Initech', currency: 'EUR', value_minor: 1000 });
  const id = deal.result.structuredContent.id as string;
  t.is((await call('cavalier.close_deal', { deal_id: id, outcome: 'lost' })).result?.structuredContent.code, 'confirmation_required');
  t.is((await call('cavalier.close_deal', { deal_id: id, outcome: 'lost', confirmed: true })).result?.structuredContent.stage, 'lost');
  const before = Number((await server.db('cavalier_quotes').count({ n: '*' }).first())?.n);
  const quote = await call('cavalier.create_quote', { deal_id: id, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price_minor: 100 }] });
  t.is(quote.result?.structuredContent.code, 'conflict', JSON.stringify(quote));
  t.regex(quote.result.structuredContent.message, /was lost/);
  t.is(Number((await server.db('cavalier_quotes').count({ n: '*' }).first())?.n), before);
});
