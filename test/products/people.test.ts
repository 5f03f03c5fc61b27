/** people through the MCP pipeline with a real SDK client, on every database. */
import { randomUUID } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { people } from '../../mcp/products/people/index.js';
import { DEFAULT_CHECKLIST } from '../../mcp/products/people/repository.js';
import {
  assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertRefusedUnconfirmed, assertToolError, productSuite, type ProductEnv, type Tenant,
} from './product_suite.js';

const each = productSuite('people');
const ALL = Object.keys(people.scopes);
const PROFILES = ['people.profiles.read', 'people.profiles.write'];
const LIFECYCLE = ['people.lifecycle.read', 'people.lifecycle.write'];

async function confirmed(t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>, unchanged: () => Promise<void>) {
  const first = await env.call(tenant, scopes, name, args);
  t.true(first.isError);
  t.is(first.structured.code, 'confirmation_required');
  t.deepEqual(first.structured.confirm_with, { tool: name, arguments: { ...args, confirmed: true } });
  await unchanged();
  return env.call(tenant, scopes, name, { ...args, confirmed: true });
}

const dayOffset = (days: number) => new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + days * 86_400_000).toISOString().slice(0, 10);
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

async function findPerson(env: ProductEnv, tenant: Tenant, email: string) {
  return env.server.db('people_profiles').where({ tenant_id: env.server.tenants[tenant].id, email }).first();
}

each('every people tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of people.tools) {
    await assertInsufficientScope(t, env, 'people', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each('list_people filters by status, department, manager and text; each tenant sees only its people', async (t, env) => {
  const acme = await env.ok(t, 'acme', PROFILES, 'people.list_people', { limit: 100 });
  t.true(acme.people.some((p: any) => p.email === 'ada.lindqvist@acme.example'));
  t.false(acme.people.some((p: any) => p.email.endsWith('@globex.example')));
  const onboarding = await env.ok(t, 'acme', PROFILES, 'people.list_people', { status: 'onboarding' });
  t.true(onboarding.people.some((p: any) => p.full_name === 'Lucía Ortega'));
  t.true(onboarding.people.every((p: any) => p.status === 'onboarding'));
  const offboarded = await env.ok(t, 'acme', PROFILES, 'people.list_people', { status: 'offboarded', department: 'SALES' });
  t.deepEqual(offboarded.people.map((p: any) => p.full_name), ['Hank Barlow']);
  const search = await env.ok(t, 'globex', PROFILES, 'people.list_people', { query: 'TANAKA' });
  t.deepEqual(search.people.map((p: any) => p.email), ['mei.tanaka@globex.example']);
  const literal = await env.ok(t, 'globex', PROFILES, 'people.list_people', { query: '%' });
  t.deepEqual(literal.people, []);
  const manager = await findPerson(env, 'acme', 'ada.lindqvist@acme.example');
  const reports = await env.ok(t, 'acme', PROFILES, 'people.list_people', { manager_id: manager.id, limit: 100 });
  t.true(reports.people.length >= 3);
  t.true(reports.people.every((p: any) => p.manager_id === manager.id));
});

each('onboarding: start creates the checklist with due dates; completing every task makes the person active', async (t, env) => {
  const manager = await findPerson(env, 'globex', 'mei.tanaka@globex.example');
  const start = dayOffset(10);
  const created = await env.ok(t, 'globex', PROFILES, 'people.create_person', {
    full_name: 'Noor Khan', email: 'Noor.Khan@globex.example', job_title: 'Logistics Planner', department: 'Operations', manager_id: manager.id, start_date: start,
  });
  t.is(created.status, 'pre_hire');
  t.is(created.email, 'noor.khan@globex.example');
  t.is(created.start_date, start);
  t.deepEqual(created.manager, { id: manager.id, full_name: 'Mei Tanaka' });
  t.deepEqual(created.onboarding_tasks, []);

  const onboarding = await env.ok(t, 'globex', LIFECYCLE, 'people.start_onboarding', { person_id: created.id });
  t.is(onboarding.status, 'onboarding');
  t.deepEqual(onboarding.onboarding_tasks.map((task: any) => [task.position, task.title, task.owner, task.status, task.due_date]),
    DEFAULT_CHECKLIST.map((task, i) => [i + 1, task.title, task.owner, 'open', addDays(start, task.due_in_days)]));
  const twice = await assertToolError(t, env, 'globex', LIFECYCLE, 'people.start_onboarding', { person_id: created.id }, 'conflict');
  t.regex(twice.message, /is onboarding; onboarding starts only for a person in pre_hire/);

  let last: any;
  for (const [i, task] of onboarding.onboarding_tasks.entries()) {
    last = await env.ok(t, 'globex', LIFECYCLE, 'people.complete_onboarding_task', { task_id: task.id });
    t.is(last.status, i === onboarding.onboarding_tasks.length - 1 ? 'active' : 'onboarding');
  }
  t.true(last.onboarding_tasks.every((task: any) => task.status === 'done' && task.completed_by === env.server.users['admin@globex.example']));
  const done = await assertToolError(t, env, 'globex', LIFECYCLE, 'people.complete_onboarding_task', { task_id: onboarding.onboarding_tasks[0].id }, 'conflict');
  t.regex(done.message, /is active; only tasks of a person in onboarding can be completed/);

  const history = await env.ok(t, 'globex', ['people.lifecycle.read'], 'people.get_person_history', { person_id: created.id });
  t.deepEqual(history.events.map((e: any) => e.sequence), Array.from({ length: 3 + DEFAULT_CHECKLIST.length }, (_, i) => i + 1));
  t.deepEqual(history.events.map((e: any) => e.kind), [
    'profile_created', 'onboarding_started', ...DEFAULT_CHECKLIST.map(() => 'onboarding_task_completed'), 'onboarding_completed',
  ]);
  t.deepEqual(history.events[1].detail, { start_date: start, tasks: DEFAULT_CHECKLIST.length });
  t.is(history.events[2].detail.title, DEFAULT_CHECKLIST[0].title);
  t.is(history.person.status, 'active');
});

each('start_onboarding takes a custom checklist and needs a start date', async (t, env) => {
  const person = await env.ok(t, 'acme', PROFILES, 'people.create_person', { full_name: 'Ines Duarte', email: 'ines.duarte@acme.example' });
  await assertInvalidArguments(t, env, 'acme', LIFECYCLE, 'people.start_onboarding', { person_id: person.id }, 'start_date');
  t.is((await findPerson(env, 'acme', 'ines.duarte@acme.example')).status, 'pre_hire');
  const started = await env.ok(t, 'acme', LIFECYCLE, 'people.start_onboarding', {
    person_id: person.id, start_date: '2027-01-04', tasks: [{ title: 'Badge photo', owner: 'hr', due_in_days: -2 }, { title: 'Meet the team', owner: 'manager' }],
  });
  t.deepEqual(started.onboarding_tasks.map((task: any) => [task.title, task.due_date]), [['Badge photo', '2027-01-02'], ['Meet the team', null]]);
  t.is(started.start_date, '2027-01-04');
  await assertInvalidArguments(t, env, 'acme', LIFECYCLE, 'people.start_onboarding', { person_id: person.id, tasks: [] }, 'tasks');
  await assertInvalidArguments(t, env, 'acme', LIFECYCLE, 'people.start_onboarding', { person_id: person.id, tasks: [{ title: 'x', owner: 'ceo' }] }, 'tasks.0.owner');
  await assertInvalidArguments(t, env, 'acme', LIFECYCLE, 'people.start_onboarding', { person_id: person.id, start_date: '2027-02-30' }, 'start_date');
});

each('start_onboarding refuses a start date whose checklist would fall due past 9999-12-31 or before 0100-01-01', async (t, env) => {
  const person = await env.ok(t, 'acme', PROFILES, 'people.create_person', { full_name: 'Far Future', email: 'far.future@acme.example' });
  // The default checklist runs from 7 days before the start to 30 days after it.
  for (const start_date of ['9999-12-31', '9999-12-02', '0100-01-01']) {
    await assertInvalidArguments(t, env, 'acme', LIFECYCLE, 'people.start_onboarding', { person_id: person.id, start_date }, 'start_date');
  }
  t.is((await findPerson(env, 'acme', 'far.future@acme.example')).status, 'pre_hire', 'nothing was written');
  const started = await env.ok(t, 'acme', LIFECYCLE, 'people.start_onboarding', {
    person_id: person.id, start_date: '9999-12-31', tasks: [{ title: 'Sign the contract', owner: 'hr', due_in_days: -2 }, { title: 'Welcome', owner: 'manager', due_in_days: 0 }],
  });
  t.deepEqual(started.onboarding_tasks.map((task: any) => task.due_date), ['9999-12-29', '9999-12-31']);
});

each('update_person records each change in the history and refuses loops and duplicates', async (t, env) => {
  const lead = await env.ok(t, 'acme', PROFILES, 'people.create_person', { full_name: 'Team Lead', email: 'lead.update@acme.example', status: 'active', department: 'Support' });
  const member = await env.ok(t, 'acme', PROFILES, 'people.create_person', { full_name: 'Team Member', email: 'member.update@acme.example', status: 'active', manager_id: lead.id });
  t.is(member.status, 'active');
  const updated = await env.ok(t, 'acme', PROFILES, 'people.update_person', { person_id: member.id, job_title: 'Support Engineer', department: 'Support', location: null });
  t.is(updated.job_title, 'Support Engineer');
  const loop = await assertToolError(t, env, 'acme', PROFILES, 'people.update_person', { person_id: lead.id, manager_id: member.id }, 'conflict');
  t.regex(loop.message, /reporting loop/);
  await assertToolError(t, env, 'acme', PROFILES, 'people.update_person', { person_id: lead.id, manager_id: lead.id }, 'conflict');
  const duplicate = await assertToolError(t, env, 'acme', PROFILES, 'people.update_person', { person_id: member.id, email: 'lead.update@acme.example' }, 'conflict');
  t.regex(duplicate.message, /already exists/);
  const unchanged = await env.ok(t, 'acme', PROFILES, 'people.update_person', { person_id: member.id, job_title: 'Support Engineer' });
  t.is(unchanged.updated_at, updated.updated_at);

  const history = await env.ok(t, 'acme', ['people.lifecycle.read', 'people.profiles.read'], 'people.get_person_history', { person_id: member.id });
  t.deepEqual(history.events.map((e: any) => e.kind), ['profile_created', 'profile_updated']);
  t.deepEqual(history.events[1].detail, { changes: { job_title: { from: null, to: 'Support Engineer' }, department: { from: null, to: 'Support' } } });
  t.is(history.events[1].by, env.server.users['admin@acme.example']);
});

each('offboard_person follows the confirmation protocol, closes the profile and moves the reports up', async (t, env) => {
  const boss = await env.ok(t, 'globex', PROFILES, 'people.create_person', { full_name: 'Big Boss', email: 'boss.off@globex.example', status: 'active' });
  const leaver = await env.ok(t, 'globex', PROFILES, 'people.create_person', { full_name: 'Leaving Manager', email: 'leaver.off@globex.example', status: 'active', manager_id: boss.id });
  const report = await env.ok(t, 'globex', PROFILES, 'people.create_person', { full_name: 'Direct Report', email: 'report.off@globex.example', status: 'active', manager_id: leaver.id });
  const args = { person_id: leaver.id, last_day: '2026-12-31', reason: 'Resigned' };

  const result = await confirmed(t, env, 'globex', LIFECYCLE, 'people.offboard_person', args, async () => {
    t.is((await findPerson(env, 'globex', 'leaver.off@globex.example')).status, 'active');
    t.is((await findPerson(env, 'globex', 'report.off@globex.example')).manager_id, leaver.id);
  });
  t.false(result.isError, JSON.stringify(result.structured));
  t.is(result.structured.status, 'offboarded');
  t.is(result.structured.end_date, '2026-12-31');
  t.deepEqual(result.structured.reports_reassigned, [report.id]);
  t.is(result.structured.reports_reassigned_to, boss.id);
  t.is((await findPerson(env, 'globex', 'report.off@globex.example')).manager_id, boss.id);

  // Done once, and closed for good: offboarding them again is refused without asking anyone.
  const again = await assertRefusedUnconfirmed(t, env, 'globex', LIFECYCLE, 'people.offboard_person', args, 'conflict');
  t.regex(again.message, /already offboarded/);
  await assertToolError(t, env, 'globex', PROFILES, 'people.update_person', { person_id: leaver.id, job_title: 'x' }, 'conflict');
  await assertToolError(t, env, 'globex', PROFILES, 'people.update_person', { person_id: report.id, manager_id: leaver.id }, 'conflict');

  const history = await env.ok(t, 'globex', ['people.lifecycle.read'], 'people.get_person_history', { person_id: leaver.id });
  t.deepEqual(history.events.map((e: any) => e.kind), ['profile_created', 'offboarded']);
  t.deepEqual(history.events[1].detail, {
    last_day: '2026-12-31', reason: 'Resigned', previous_status: 'active', tasks_cancelled: 0, reports_reassigned: [report.id],
  });
  const reportHistory = await env.ok(t, 'globex', ['people.lifecycle.read'], 'people.get_person_history', { person_id: report.id });
  t.deepEqual(reportHistory.events.at(-1).detail, { changes: { manager_id: { from: leaver.id, to: boss.id } }, because: 'manager offboarded' });
});

each('offboarding someone mid-onboarding cancels their open tasks (demo data)', async (t, env) => {
  const analyst = await findPerson(env, 'globex', 'omar.haddad@globex.example');
  const before = await env.ok(t, 'globex', PROFILES, 'people.get_person', { person_id: analyst.id });
  t.is(before.status, 'onboarding');
  const open = before.onboarding_tasks.filter((task: any) => task.status === 'open').length;
  t.is(open, DEFAULT_CHECKLIST.length - 1);
  const result = await confirmed(t, env, 'globex', LIFECYCLE, 'people.offboard_person', { person_id: analyst.id, last_day: dayOffset(3), reason: 'Offer withdrawn' }, async () => undefined);
  t.is(result.structured.tasks_cancelled, open);
  t.is(result.structured.onboarding_tasks.filter((task: any) => task.status === 'cancelled').length, open);
  t.is(result.structured.onboarding_tasks.filter((task: any) => task.status === 'done').length, 1);
});

each('invalid people arguments are refused naming the field, and nothing is written', async (t, env) => {
  await assertInvalidArguments(t, env, 'acme', PROFILES, 'people.create_person', { full_name: 'Bad Mail', email: 'nope' }, 'email');
  await assertInvalidArguments(t, env, 'acme', PROFILES, 'people.create_person', { full_name: 'Bad Date', email: 'bad.date@acme.example', start_date: '01/02/2027' }, 'start_date');
  await assertInvalidArguments(t, env, 'acme', PROFILES, 'people.create_person', { full_name: 'Bad Status', email: 'bad.status@acme.example', status: 'offboarded' }, 'status');
  await assertInvalidArguments(t, env, 'acme', PROFILES, 'people.create_person', { full_name: 'x'.repeat(201), email: 'long@acme.example' }, 'full_name');
  await assertInvalidArguments(t, env, 'acme', PROFILES, 'people.list_people', { limit: 101 }, 'limit');
  await assertInvalidArguments(t, env, 'acme', LIFECYCLE, 'people.offboard_person', { person_id: 'x', last_day: '2026-13-01', reason: 'r' }, 'last_day');
  await assertInvalidArguments(t, env, 'acme', LIFECYCLE, 'people.offboard_person', { person_id: 'x', last_day: '2026-12-01' }, 'reason');
  t.is((await env.server.db('people_profiles').whereIn('email', ['nope', 'bad.date@acme.example', 'bad.status@acme.example', 'long@acme.example'])).length, 0);
  const dup = await assertToolError(t, env, 'acme', PROFILES, 'people.create_person', { full_name: 'Dup', email: 'WILE@acme.example' }, 'conflict');
  t.regex(dup.message, /already exists/);
  await assertToolError(t, env, 'acme', PROFILES, 'people.get_person', { person_id: '00000000-0000-4000-8000-000000000000' }, 'not_found');
});

each("another tenant's person or task is forbidden_cross_tenant for every tool, resource and prompt", async (t, env) => {
  // globex reaching into acme: records no other test of this file changes.
  const person = await findPerson(env, 'acme', 'wile@acme.example');
  const task = await env.server.db('people_onboarding_tasks').where({ tenant_id: env.server.tenants.acme.id, person_id: (await findPerson(env, 'acme', 'lucia.ortega@acme.example')).id }).first();
  for (const tool of people.tools) {
    const args: Record<string, unknown> = {};
    if ('person_id' in tool.input) args.person_id = person.id;
    if ('manager_id' in tool.input) args.manager_id = person.id;
    if ('task_id' in tool.input) args.task_id = task.id;
    if (!Object.keys(args).length) continue;
    if ('full_name' in tool.input && tool.name === 'people.create_person') Object.assign(args, { full_name: 'Spy', email: 'spy@globex.example' });
    if (tool.name === 'people.offboard_person') Object.assign(args, { last_day: '2026-12-31', reason: 'x' });
    await assertCrossTenant(t, env, 'people', 'globex', ALL, tool.name, args);
  }
  t.falsy(await findPerson(env, 'globex', 'spy@globex.example'));
  t.is((await findPerson(env, 'acme', 'wile@acme.example')).status, 'active');
  t.is((await env.server.db('people_onboarding_tasks').where({ id: task.id }).first()).status, task.status);
  const client = await env.client('globex', ALL);
  await t.throwsAsync(client.readResource({ uri: `portico://people/profiles/${person.id}` }), { message: /another organization/ });
  await t.throwsAsync(client.getPrompt({ name: 'people.plan_onboarding', arguments: { person_id: person.id } }), { message: /another organization/ });
});

each('the profile resource and the onboarding prompt carry the tenant data', async (t, env) => {
  const client = await env.client('acme', ALL);
  const lucia = await findPerson(env, 'acme', 'lucia.ortega@acme.example');
  const profile = await env.ok(t, 'acme', ALL, 'people.get_person', { person_id: lucia.id });
  const read = await client.readResource({ uri: `portico://people/profiles/${lucia.id}` });
  t.deepEqual(JSON.parse((read.contents[0] as { text: string }).text), profile);
  t.is(profile.manager.full_name, 'Ada Lindqvist');

  const prompt = await client.getPrompt({ name: 'people.plan_onboarding', arguments: { person_id: lucia.id } });
  const text = (prompt.messages[0].content as { text: string }).text;
  t.regex(text, /Lucía Ortega at Acme Corporation: Frontend Engineer in Engineering/);
  t.regex(text, /reporting to Ada Lindqvist/);
  const open = profile.onboarding_tasks.filter((task: any) => task.status === 'open');
  t.is(open.length, DEFAULT_CHECKLIST.length - 3);
  for (const task of open) t.true(text.includes(`- [${task.owner}] ${task.title} (due ${task.due_date})`));
  t.false(text.includes(DEFAULT_CHECKLIST[0].title));
  t.is((prompt.messages[1].content as { resource: { uri: string } }).resource.uri, `portico://people/profiles/${lucia.id}`);
});

/** Every page of a person's history, from the first (newest) on, following next_cursor. */
async function historyPages(t: ExecutionContext, env: ProductEnv, tenant: Tenant, personId: string, limit?: number, between?: () => Promise<void>) {
  const pages: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.ok(t, tenant, ['people.lifecycle.read'], 'people.get_person_history', { person_id: personId, ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}) });
    pages.push(page);
    cursor = page.next_cursor ?? undefined;
    if (pages.length === 1) await between?.();
  } while (cursor && pages.length < 100);
  return pages;
}

each("get_person_history pages back through 1,200 events, ties in time included, and refuses a cursor from elsewhere", async (t, env) => {
  const person = await env.ok(t, 'acme', PROFILES, 'people.create_person', { full_name: 'Long History', email: `long.history.${env.kind}@acme.example` });
  // 1,200 more events after profile_created, 25 to a millisecond, written in no particular order.
  const tenant = env.server.tenants.acme.id;
  const at = Date.now();
  const events = Array.from({ length: 1_200 }, (_, i) => ({
    id: randomUUID(), tenant_id: tenant, person_id: person.id, sequence: i + 2, kind: 'profile_updated',
    detail: JSON.stringify({ changes: { location: { from: `room ${i}`, to: `room ${i + 1}` } } }), actor_user_id: null, at: at + Math.floor(i / 25),
  })).sort((a, b) => a.id.localeCompare(b.id));
  for (let i = 0; i < events.length; i += 200) await env.server.db('people_lifecycle_events').insert(events.slice(i, i + 200));
  const all = Array.from({ length: 1_201 }, (_, i) => i + 1);
  const sequences = (pages: any[]) => [...pages].reverse().flatMap((page) => page.events.map((e: any) => e.sequence));

  const whole = await historyPages(t, env, 'acme', person.id);
  t.deepEqual(whole.map((page) => page.events.length), [500, 500, 201], 'the default page is 500 events');
  t.deepEqual(sequences(whole), all, 'newest page first, each page oldest first: every event once, in order');
  t.deepEqual(whole.map((page) => [page.events_total, page.events_truncated]), [[1_201, true], [1_201, true], [1_201, false]]);
  t.is(whole.at(-1).next_cursor, null);
  t.is(whole[2].events[0].kind, 'profile_created');

  // Pages that end inside a millisecond, and a change made while the client pages: it is newer than
  // the pages still to come, which neither repeat nor skip an event.
  const small = await historyPages(t, env, 'acme', person.id, 64, async () => {
    await env.ok(t, 'acme', PROFILES, 'people.update_person', { person_id: person.id, location: 'Meanwhile' });
  });
  t.is(small.length, Math.ceil(1_201 / 64));
  t.deepEqual(sequences(small), all);
  t.deepEqual((await env.ok(t, 'acme', ['people.lifecycle.read'], 'people.get_person_history', { person_id: person.id, limit: 1 })).events.map((e: any) => e.sequence), [1_202]);

  // A cursor is this person's: a malformed one, one past what a sequence holds, a made-up event,
  // another person's and another tenant's are refused naming the field.
  const other = await env.ok(t, 'acme', PROFILES, 'people.create_person', { full_name: 'Short History', email: `short.history.${env.kind}@acme.example` });
  await env.ok(t, 'acme', PROFILES, 'people.update_person', { person_id: other.id, location: 'Elsewhere' });
  const foreigner = await env.ok(t, 'globex', PROFILES, 'people.create_person', { full_name: 'Foreign History', email: `foreign.history.${env.kind}@globex.example` });
  await env.ok(t, 'globex', PROFILES, 'people.update_person', { person_id: foreigner.id, location: 'Abroad' });
  const cursorOf = async (tenantName: Tenant, id: string) =>
    (await env.ok(t, tenantName, ['people.lifecycle.read'], 'people.get_person_history', { person_id: id, limit: 1 })).next_cursor as string;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const refused = [
    'not-a-cursor', encode([2 ** 31, events[0].id]), encode([5, 'x\u0000']), encode([5, randomUUID()]),
    await cursorOf('acme', other.id), await cursorOf('globex', foreigner.id),
  ];
  for (const cursor of refused) {
    await assertInvalidArguments(t, env, 'acme', ['people.lifecycle.read'], 'people.get_person_history', { person_id: person.id, cursor }, 'cursor');
  }
  await assertInvalidArguments(t, env, 'acme', ['people.lifecycle.read'], 'people.get_person_history', { person_id: person.id, limit: 0 }, 'limit');
  await assertInvalidArguments(t, env, 'acme', ['people.lifecycle.read'], 'people.get_person_history', { person_id: person.id, limit: 501 }, 'limit');
});
