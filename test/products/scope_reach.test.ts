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
  t.regex(text, /This connection may not read quotes \(cavalier\.quotes\.read\)/);
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

mcpTest('cavalier: a deal shows its quotes and statements of work only to grants that may read them, as tool, resource and prompt', async (t, server) => {
  const quote = await server.db('cavalier_quotes').where({ tenant_id: server.tenants.acme.id }).whereNotNull('deal_id').first('id', 'deal_id');
  t.truthy(quote, 'the demo has a quote attached to a deal');
  const views = async (scopes: string[]) => {
    const call = await session(server, 'cavalier', scopes);
    const tool = (await call('tools/call', { name: 'cavalier.get_deal', arguments: { deal_id: quote.deal_id } })).body.result.structuredContent;
    const resource = JSON.parse((await call('resources/read', { uri: `portico://cavalier/deals/${quote.deal_id}` })).body.result.contents[0].text);
    const prompt = JSON.stringify((await call('prompts/get', { name: 'cavalier.draft_sow_from_deal', arguments: { deal_id: quote.deal_id } })).body.result);
    return { tool, resource, prompt };
  };
  const dealsOnly = await views(['cavalier.deals.read']);
  for (const [name, view] of [['get_deal', dealsOnly.tool], ['the deal resource', dealsOnly.resource]] as const) {
    t.is(view.quotes, undefined, name);
    t.is(view.sows, undefined, name);
    t.is(view.quotes_omitted, 'reading quotes needs the scope cavalier.quotes.read', name);
    t.is(view.sows_omitted, 'reading sows needs the scope cavalier.sows.read', name);
  }
  t.false(dealsOnly.prompt.includes(quote.id), 'the prompt embeds no quote id');
  t.false(dealsOnly.prompt.includes('total_minor'), 'nor any quote total');
  const all = await views(['cavalier.deals.read', 'cavalier.quotes.read', 'cavalier.sows.read']);
  t.true(all.tool.quotes.some((q: { id: string }) => q.id === quote.id));
  t.true(all.resource.quotes.some((q: { id: string }) => q.id === quote.id));
  t.true(Array.isArray(all.tool.sows) && all.tool.quotes_omitted === undefined);
  t.true(all.prompt.includes(quote.id));
});

mcpTest('aegis: starting a scan returns its findings only to grants that may read findings', async (t, server) => {
  const start = async (scopes: string[]) => (await (await session(server, 'aegis', scopes))('tools/call', { name: 'aegis.start_scan', arguments: {} })).body.result.structuredContent;
  const scansOnly = await start(['aegis.scans.write']);
  t.is(scansOnly.findings, undefined);
  t.is(scansOnly.findings_omitted, 'reading findings needs the scope aegis.findings.read');
  t.true(typeof scansOnly.id === 'string' && typeof scansOnly.uri === 'string', 'the scan itself is returned');
  const both = await start(['aegis.scans.write', 'aegis.findings.read']);
  t.true(Array.isArray(both.findings) && both.findings.length > 0);
});

mcpTest('pawvault: a pet shows its health records only to grants that may read them, and the vet-visit prompt its profile only to grants that may read profiles', async (t, server) => {
  const pet = await server.db('pawvault_pets').where({ tenant_id: server.tenants.acme.id }).whereNotNull('microchip_number')
    .whereExists((q) => q.select(1).from('pawvault_vaccinations').whereRaw('pawvault_vaccinations.pet_id = pawvault_pets.id')).first('id', 'microchip_number', 'breed');
  t.truthy(pet, 'the demo has a microchipped pet with vaccinations');
  const petsOnly = await session(server, 'pawvault', ['pawvault.pets.read']);
  const tool = (await petsOnly('tools/call', { name: 'pawvault.get_pet', arguments: { pet_id: pet.id } })).body.result.structuredContent;
  const resource = JSON.parse((await petsOnly('resources/read', { uri: `portico://pawvault/pets/${pet.id}` })).body.result.contents[0].text);
  for (const [name, view] of [['get_pet', tool], ['the pet resource', resource]] as const) {
    t.is(view.microchip_number, pet.microchip_number, `${name} shows the profile`);
    t.is(view.vaccinations, undefined, name);
    t.is(view.vaccinations_omitted, 'reading vaccinations needs the scope pawvault.health.read', name);
    t.is(view.visits, undefined, name);
    t.is(view.medications, undefined, name);
  }
  const healthOnly = await session(server, 'pawvault', ['pawvault.health.read']);
  const prompt = await healthOnly('prompts/get', { name: 'pawvault.prepare_vet_visit', arguments: { pet_id: pet.id } });
  t.is(prompt.status, 200, prompt.text);
  const text = JSON.stringify(prompt.body.result);
  t.false(text.includes(pet.microchip_number), 'no microchip number without pawvault.pets.read');
  t.regex(text, /may not read the pet's profile: pawvault\.pets\.read/);
  t.regex(text, /Vaccinations due or overdue/, 'the health records are there');
  const both = await session(server, 'pawvault', ['pawvault.pets.read', 'pawvault.health.read']);
  t.true(Array.isArray((await both('tools/call', { name: 'pawvault.get_pet', arguments: { pet_id: pet.id } })).body.result.structuredContent.vaccinations));
  t.true(JSON.stringify((await both('prompts/get', { name: 'pawvault.prepare_vet_visit', arguments: { pet_id: pet.id } })).body.result).includes(pet.microchip_number));
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

mcpTest('people: the lifecycle tools show the profile of the person they move only to grants that may read profiles', async (t, server) => {
  const manager = await server.db('people_profiles').where({ tenant_id: server.tenants.acme.id, status: 'active' }).first('id', 'full_name');
  const profiles = await caller(server, 'people', ['people.profiles.write']);
  const hire = async (index: number) => (await profiles('people.create_person', {
    full_name: `Reach Hire ${index}`, email: `reach.hire.${index}@acme.example`, job_title: 'Night Auditor', department: 'Finance',
    location: 'Lisbon', manager_id: manager.id, start_date: day(10),
  })).result.structuredContent.id as string;
  const hidden = ['full_name', 'email', 'job_title', 'department', 'location', 'manager_id', 'manager', 'direct_reports'];
  for (const [scopes, mayRead] of [[['people.lifecycle.write'], false], [['people.lifecycle.write', 'people.profiles.read'], true]] as const) {
    const person = await hire(mayRead ? 2 : 1);
    const call = await caller(server, 'people', [...scopes]);
    const started = (await call('people.start_onboarding', { person_id: person })).result?.structuredContent;
    const completed = (await call('people.complete_onboarding_task', { task_id: started.onboarding_tasks[0].id })).result?.structuredContent;
    const offboarding = { person_id: person, last_day: day(20), reason: 'Offer withdrawn' };
    t.is((await call('people.offboard_person', offboarding)).result?.structuredContent.code, 'confirmation_required');
    const offboarded = (await call('people.offboard_person', { ...offboarding, confirmed: true })).result?.structuredContent;
    for (const [name, view] of [['start_onboarding', started], ['complete_onboarding_task', completed], ['offboard_person', offboarded]] as const) {
      const label = `${name} with ${scopes.join(' ')}`;
      t.is(view.id, person, label);
      t.true(Array.isArray(view.onboarding_tasks) && view.onboarding_tasks.length === 6, label);
      if (mayRead) {
        t.like(view, { email: `reach.hire.2@acme.example`, job_title: 'Night Auditor', department: 'Finance', location: 'Lisbon' }, label);
        t.is(view.manager.full_name, manager.full_name, label);
        t.is(view.profile_omitted, undefined, label);
      } else {
        for (const part of hidden) t.false(part in view, `${label}: ${part}`);
        t.false(JSON.stringify(view).includes('Night Auditor') || JSON.stringify(view).includes('reach.hire.1@'), label);
        t.is(view.profile_omitted, 'reading the profile needs the scope people.profiles.read', label);
      }
    }
    t.like(started, { status: 'onboarding', start_date: day(10) });
    t.like(offboarded, { status: 'offboarded', end_date: day(20), tasks_cancelled: 5 });
  }
});

mcpTest('people: creating and updating a profile shows only what the call wrote to grants that may not read profiles', async (t, server) => {
  // A manager whose name and reports the writer never sent, and a person it only touches.
  const manager = await server.db('people_profiles').where({ tenant_id: server.tenants.acme.id, status: 'active' }).whereExists((q) =>
    q.select(1).from('people_profiles as report').whereRaw('report.manager_id = people_profiles.id')).first('id', 'full_name');
  const touched = await server.db('people_profiles').where({ tenant_id: server.tenants.acme.id }).whereNot('status', 'offboarded').whereNot('id', manager.id)
    .whereNotNull('job_title').whereNotNull('manager_id').first('id', 'full_name', 'email', 'job_title', 'location');
  t.truthy(manager && touched, 'the demo has a manager with reports and a person with a job title and a manager');
  for (const [scopes, mayRead] of [[['people.profiles.write'], false], [['people.profiles.write', 'people.profiles.read'], true]] as const) {
    const label = scopes.join(' ');
    const call = await caller(server, 'people', [...scopes]);
    const sent = { full_name: `Writer Hire ${scopes.length}`, email: `Writer.Hire.${scopes.length}@ACME.example`, manager_id: manager.id, start_date: day(10) };
    const created = (await call('people.create_person', sent)).result?.structuredContent;
    // A change that changes nothing, and one that changes one field, of a person the caller knows only by id.
    const noop = (await call('people.update_person', { person_id: touched.id, full_name: touched.full_name })).result?.structuredContent;
    const moved = (await call('people.update_person', { person_id: touched.id, location: `Floor ${scopes.length}` })).result?.structuredContent;
    t.like(created, { full_name: sent.full_name, email: sent.email.toLowerCase(), manager_id: manager.id, start_date: day(10), status: 'pre_hire' }, label);
    t.like(noop, { id: touched.id, full_name: touched.full_name }, label);
    t.like(moved, { id: touched.id, location: `Floor ${scopes.length}` }, label);
    for (const view of [created, noop, moved]) t.is(view.uri, `portico://people/profiles/${view.id}`, label);
    if (mayRead) {
      t.is(created.manager.full_name, manager.full_name, label);
      t.like(noop, { email: touched.email, job_title: touched.job_title }, label);
      t.true(typeof moved.direct_reports === 'number' && Array.isArray(moved.onboarding_tasks), label);
      for (const view of [created, noop, moved]) t.is(view.profile_omitted, undefined, label);
    } else {
      const omitted = 'reading the profile needs the scope people.profiles.read';
      t.deepEqual(Object.keys(created).sort(), ['email', 'full_name', 'id', 'manager_id', 'profile_omitted', 'start_date', 'status', 'uri'], label);
      t.deepEqual(Object.keys(noop).sort(), ['full_name', 'id', 'profile_omitted', 'uri'], label);
      t.deepEqual(Object.keys(moved).sort(), ['id', 'location', 'profile_omitted', 'uri'], label);
      for (const view of [created, noop, moved]) t.is(view.profile_omitted, omitted, label);
      const text = JSON.stringify([created, noop, moved]);
      for (const secret of [manager.full_name, touched.email, touched.job_title, touched.location].filter(Boolean)) t.false(text.includes(secret), `${label}: ${secret}`);
    }
  }
});

mcpTest("people: a person's history shows profile values only to grants that may read profiles", async (t, server) => {
  const writer = await caller(server, 'people', ['people.profiles.write']);
  const sent = { full_name: 'Historian Hire', email: 'historian.hire@acme.example', job_title: 'Archivist', department: 'Records', start_date: day(5) };
  const person = (await writer('people.create_person', sent)).result?.structuredContent;
  t.truthy(person?.id, 'created');
  t.truthy((await writer('people.update_person', { person_id: person.id, email: 'h.hire@acme.example', location: 'Vault 7', start_date: day(6) })).result);
  for (const [scopes, mayRead] of [[['people.lifecycle.read'], false], [['people.lifecycle.read', 'people.profiles.read'], true]] as const) {
    const label = scopes.join(' ');
    const history = (await (await caller(server, 'people', [...scopes]))('people.get_person_history', { person_id: person.id })).result?.structuredContent;
    const [created, updated] = history.events;
    t.deepEqual(history.events.map((e: { kind: string }) => e.kind), ['profile_created', 'profile_updated'], label);
    t.like(history.person, { id: person.id, status: 'pre_hire' }, label);
    if (mayRead) {
      t.is(history.person.full_name, sent.full_name, label);
      t.like(created.detail, { status: 'pre_hire', job_title: 'Archivist', department: 'Records' }, label);
      t.deepEqual(updated.detail.changes.email, { from: sent.email, to: 'h.hire@acme.example' }, label);
      t.is(history.profile_omitted, undefined, label);
      continue;
    }
    t.is(history.person.full_name, undefined, label);
    t.is(history.profile_omitted, 'reading the profile needs the scope people.profiles.read', label);
    // The lifecycle parts stay: the status a profile was created with, a new start date.
    t.deepEqual(created.detail, { status: 'pre_hire', fields_omitted: ['job_title', 'department'] }, label);
    t.deepEqual(Object.keys(updated.detail.changes), ['start_date'], label);
    t.deepEqual([...updated.detail.fields_omitted].sort(), ['email', 'location'], label);
    const text = JSON.stringify(history);
    for (const secret of ['Historian', 'historian.hire', 'h.hire', 'Archivist', 'Records', 'Vault 7']) t.false(text.includes(secret), `${label}: ${secret}`);
  }
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
  const args = { person_id: person.id, last_day: day(29), reason: 'a mistake' };
  const call = await caller(server, 'people', ['people.lifecycle.write']);
  // Refused before any confirmation is asked for, and refused alike when sent confirmed.
  for (const sent of [args, { ...args, confirmed: true }]) {
    const refused = await call('people.offboard_person', sent);
    t.is(refused.error?.data.code, 'invalid_arguments', JSON.stringify(refused));
    t.is(refused.error.data.field, 'last_day');
  }
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
  // Refused before any confirmation is asked for, and refused alike when sent confirmed.
  const accept = { quote_id: id, decision: 'accepted' };
  for (const args of [accept, { ...accept, confirmed: true }]) {
    const accepted = await call('cavalier.record_quote_decision', args);
    t.is(accepted.result?.structuredContent?.code, 'conflict', JSON.stringify(accepted));
    t.regex(accepted.result.structuredContent.message, /expired on/);
  }
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

mcpTest('aegis: the triage prompt (findings) shows how the scan ran only to grants that may read scans', async (t, server) => {
  // The prompt embedded the whole scan (who started it, checks run, subjects examined), which
  // aegis.get_scan shows only with aegis.scans.read; findings.read alone sees the findings.
  const prompt = async (scopes: string[]) => {
    const response = await (await session(server, 'aegis', scopes))('prompts/get', { name: 'aegis.triage_findings', arguments: {} });
    t.is(response.status, 200, response.text);
    const embedded = response.body.result.messages.find((m: any) => m.content.type === 'resource');
    return JSON.parse(embedded.content.resource.text) as Record<string, unknown>;
  };
  const findingsOnly = await prompt(['aegis.findings.read']);
  for (const part of ['checks_run', 'subjects_examined', 'started_by', 'completed_at']) t.false(part in findingsOnly, part);
  t.regex(String(findingsOnly.run_omitted), /aegis\.scans\.read/);
  t.true(Array.isArray(findingsOnly.findings) && findingsOnly.findings.length > 0, 'the findings are shown');
  t.truthy(findingsOnly.open_findings, 'their counts too');
  const both = await prompt(['aegis.findings.read', 'aegis.scans.read']);
  t.is(typeof both.checks_run, 'number');
  t.truthy(both.started_by);
  t.is(both.run_omitted, undefined);
});
