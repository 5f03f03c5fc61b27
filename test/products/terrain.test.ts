/** terrain through the MCP pipeline with a real SDK client, on every database. */
import type { ExecutionContext } from 'ava';
import { terrain } from '../../mcp/products/terrain/index.js';
import {
  assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertRefusedUnconfirmed, assertToolError, productSuite, type ProductEnv, type Tenant,
} from './product_suite.js';

const each = productSuite('terrain');
const ALL = Object.keys(terrain.scopes);
const WORKFLOWS = ['terrain.workflows.read', 'terrain.workflows.write'];
const RUNS = ['terrain.runs.read', 'terrain.runs.write'];

async function confirmed(t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>, unchanged: () => Promise<void>) {
  const first = await env.call(tenant, scopes, name, args);
  t.true(first.isError);
  t.is(first.structured.code, 'confirmation_required');
  t.regex(first.structured.will_destroy, /will be cancelled at its current step and can never be resumed/);
  t.deepEqual(first.structured.confirm_with, { tool: name, arguments: { ...args, confirmed: true } });
  await unchanged();
  return env.call(tenant, scopes, name, { ...args, confirmed: true });
}

async function newWorkflow(t: ExecutionContext, env: ProductEnv, tenant: Tenant, name: string) {
  return env.ok(t, tenant, WORKFLOWS, 'terrain.create_workflow', {
    name,
    description: 'Inspect a bridge.',
    steps: [{ name: 'Visual inspection', instructions: 'Walk the deck.' }, { name: 'Load test' }, { name: 'Report', instructions: 'File it.' }],
  });
}

each('every terrain tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of terrain.tools) {
    await assertInsufficientScope(t, env, 'terrain', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each('create_workflow numbers the steps in order; get_workflow and list_workflows return them', async (t, env) => {
  const workflow = await newWorkflow(t, env, 'acme', 'Bridge inspection');
  t.is(workflow.step_count, 3);
  t.deepEqual(workflow.steps, [
    { position: 1, name: 'Visual inspection', instructions: 'Walk the deck.' },
    { position: 2, name: 'Load test', instructions: null },
    { position: 3, name: 'Report', instructions: 'File it.' },
  ]);
  t.deepEqual(await env.ok(t, 'acme', WORKFLOWS, 'terrain.get_workflow', { workflow_id: workflow.id.toUpperCase() }), workflow);
  const list = await env.ok(t, 'acme', WORKFLOWS, 'terrain.list_workflows', { limit: 100 });
  t.true(list.workflows.some((w: any) => w.id === workflow.id && w.step_count === 3 && !('steps' in w)));
  t.true(list.workflows.some((w: any) => w.name === 'Site survey'));
  t.false(list.workflows.some((w: any) => w.name === 'Environmental permit review'));
  const duplicate = await assertToolError(t, env, 'acme', WORKFLOWS, 'terrain.create_workflow', { name: 'Bridge inspection', steps: [{ name: 'x' }] }, 'conflict');
  t.regex(duplicate.message, /already exists/);
});

each('a run advances one step at a time, records who and when, and completes after the last step', async (t, env) => {
  const workflow = await newWorkflow(t, env, 'globex', 'Culvert check');
  const run = await env.ok(t, 'globex', RUNS, 'terrain.start_workflow_run', { workflow_id: workflow.id, subject: 'Culvert C-7', note: 'Requested by county' });
  t.is(run.status, 'running');
  t.is(run.current_position, 1);
  t.deepEqual(run.current_step, { position: 1, name: 'Visual inspection', instructions: 'Walk the deck.' });
  t.deepEqual(run.steps.map((s: any) => s.state), ['current', 'pending', 'pending']);
  t.deepEqual(run.history.map((h: any) => [h.sequence, h.action, h.step_position, h.note]), [[1, 'started', 1, 'Requested by county']]);

  const admin = env.server.users['admin@globex.example'];
  const second = await env.ok(t, 'globex', RUNS, 'terrain.advance_workflow_run', { run_id: run.id, note: 'Deck cracked at pier 2' });
  t.is(second.current_position, 2);
  t.deepEqual(second.steps.map((s: any) => s.state), ['done', 'current', 'pending']);
  t.deepEqual(second.history.at(-1), { ...second.history.at(-1), action: 'advanced', step_position: 1, step_name: 'Visual inspection', note: 'Deck cracked at pier 2', by: admin });
  t.true(Math.abs(Date.parse(second.history.at(-1).at) - Date.now()) < 60_000);

  await env.ok(t, 'globex', RUNS, 'terrain.advance_workflow_run', { run_id: run.id });
  const done = await env.ok(t, 'globex', RUNS, 'terrain.advance_workflow_run', { run_id: run.id, note: 'Report filed' });
  t.is(done.status, 'completed');
  t.is(done.current_position, null);
  t.is(done.current_step, null);
  t.truthy(done.completed_at);
  t.deepEqual(done.steps.map((s: any) => s.state), ['done', 'done', 'done']);
  t.deepEqual(done.history.map((h: any) => [h.sequence, h.action, h.step_position]), [
    [1, 'started', 1], [2, 'advanced', 1], [3, 'advanced', 2], [4, 'advanced', 3], [5, 'completed', null],
  ]);

  const beyond = await assertToolError(t, env, 'globex', RUNS, 'terrain.advance_workflow_run', { run_id: run.id }, 'conflict');
  t.regex(beyond.message, /is completed; only a running workflow run can be advanced/);
  t.deepEqual(await env.ok(t, 'globex', RUNS, 'terrain.get_workflow_run', { run_id: run.id }), done);
  // A completed run cannot be cancelled: nobody is asked to confirm it.
  const cancelDone = await assertRefusedUnconfirmed(t, env, 'globex', RUNS, 'terrain.cancel_workflow_run', { run_id: run.id }, 'conflict');
  t.regex(cancelDone.message, /is completed; only a running workflow run can be cancelled/);
});

each('cancel_workflow_run follows the confirmation protocol and stops the run for good', async (t, env) => {
  const workflow = await newWorkflow(t, env, 'acme', 'Dam survey');
  const run = await env.ok(t, 'acme', RUNS, 'terrain.start_workflow_run', { workflow_id: workflow.id, subject: 'North dam' });
  await env.ok(t, 'acme', RUNS, 'terrain.advance_workflow_run', { run_id: run.id });
  const cancelled = await confirmed(t, env, 'acme', RUNS, 'terrain.cancel_workflow_run', { run_id: run.id, reason: 'Flooding' }, async () => {
    const row = await env.server.db('terrain_runs').where({ id: run.id }).first();
    t.is(row.status, 'running');
    t.is(row.cancelled_at, null);
  });
  t.false(cancelled.isError, JSON.stringify(cancelled.structured));
  t.is(cancelled.structured.status, 'cancelled');
  t.is(cancelled.structured.cancel_reason, 'Flooding');
  t.is(cancelled.structured.cancelled_by, env.server.users['admin@acme.example']);
  t.is(cancelled.structured.current_position, 2);
  t.deepEqual(cancelled.structured.steps.map((s: any) => s.state), ['done', 'not_reached', 'not_reached']);
  t.deepEqual(cancelled.structured.history.at(-1), { ...cancelled.structured.history.at(-1), action: 'cancelled', step_position: 2, step_name: 'Load test', note: 'Flooding' });

  // Done once: the run is cancelled, so cancelling it again is refused without asking anyone, and changes nothing.
  const again = await assertRefusedUnconfirmed(t, env, 'acme', RUNS, 'terrain.cancel_workflow_run', { run_id: run.id, reason: 'Flooding' }, 'conflict');
  t.regex(again.message, /is cancelled; only a running workflow run can be cancelled/);
  await assertToolError(t, env, 'acme', RUNS, 'terrain.advance_workflow_run', { run_id: run.id }, 'conflict');
  const events = await env.server.db('terrain_run_events').where({ run_id: run.id });
  t.is(events.filter((e: any) => e.action === 'cancelled').length, 1);

  const running = await env.ok(t, 'acme', RUNS, 'terrain.list_workflow_runs', { workflow_id: workflow.id });
  t.deepEqual(running.runs.map((r: any) => [r.id, r.status, r.workflow_name]), [[run.id, 'cancelled', 'Dam survey']]);
  const onlyRunning = await env.ok(t, 'acme', RUNS, 'terrain.list_workflow_runs', { status: 'running', limit: 100 });
  t.true(onlyRunning.runs.every((r: any) => r.status === 'running'));
  t.true(onlyRunning.runs.some((r: any) => r.subject === 'Plot 12, Mesa Road' && r.current_position === 3 && r.step_count === 5));
});

each('two concurrent advances of one run move it exactly two steps, never skipping one', async (t, env) => {
  const workflow = await newWorkflow(t, env, 'acme', 'Race check');
  const run = await env.ok(t, 'acme', RUNS, 'terrain.start_workflow_run', { workflow_id: workflow.id, subject: 'Race' });
  const results = await Promise.all([1, 2].map(() => env.call('acme', RUNS, 'terrain.advance_workflow_run', { run_id: run.id })));
  const moved = results.filter((r) => !r.isError).length;
  for (const failed of results.filter((r) => r.isError)) t.is(failed.structured.code, 'conflict');
  const after = await env.ok(t, 'acme', RUNS, 'terrain.get_workflow_run', { run_id: run.id });
  t.is(after.current_position, 1 + moved);
  t.deepEqual(after.history.filter((h: any) => h.action === 'advanced').map((h: any) => h.step_position), Array.from({ length: moved }, (_, i) => i + 1));
});

each('invalid terrain arguments are refused naming the field', async (t, env) => {
  await assertInvalidArguments(t, env, 'acme', WORKFLOWS, 'terrain.create_workflow', { name: 'Empty', steps: [] }, 'steps');
  await assertInvalidArguments(t, env, 'acme', WORKFLOWS, 'terrain.create_workflow', { name: 'Many', steps: Array.from({ length: 51 }, (_, i) => ({ name: `s${i}` })) }, 'steps');
  await assertInvalidArguments(t, env, 'acme', WORKFLOWS, 'terrain.create_workflow', { name: 'Bad', steps: [{ name: '' }] }, 'steps.0.name');
  await assertInvalidArguments(t, env, 'acme', WORKFLOWS, 'terrain.create_workflow', { steps: [{ name: 'a' }] }, 'name');
  await assertInvalidArguments(t, env, 'acme', RUNS, 'terrain.start_workflow_run', { workflow_id: 'x', subject: 'y'.repeat(201) }, 'subject');
  await assertInvalidArguments(t, env, 'acme', RUNS, 'terrain.list_workflow_runs', { status: 'paused' }, 'status');
  await assertInvalidArguments(t, env, 'acme', RUNS, 'terrain.cancel_workflow_run', { run_id: 'x', reason: 'r'.repeat(501) }, 'reason');
  t.is((await env.server.db('terrain_workflows').whereIn('name', ['Empty', 'Many', 'Bad'])).length, 0);
  await assertToolError(t, env, 'acme', RUNS, 'terrain.get_workflow_run', { run_id: '00000000-0000-4000-8000-000000000000' }, 'not_found');
  await assertToolError(t, env, 'acme', RUNS, 'terrain.start_workflow_run', { workflow_id: 'nope', subject: 's' }, 'not_found');
});

each("another tenant's workflow or run is forbidden_cross_tenant for every tool, resource and prompt", async (t, env) => {
  const workflow = (await env.server.db('terrain_workflows').where({ tenant_id: env.server.tenants.globex.id }).first()).id;
  const run = (await env.server.db('terrain_runs').where({ tenant_id: env.server.tenants.globex.id, status: 'running' }).first());
  for (const tool of terrain.tools) {
    const args: Record<string, unknown> = {};
    if ('workflow_id' in tool.input) args.workflow_id = workflow;
    if ('run_id' in tool.input) args.run_id = run.id;
    if ('subject' in tool.input) args.subject = 'Intrusion';
    if (!('workflow_id' in args) && !('run_id' in args)) continue;
    await assertCrossTenant(t, env, 'terrain', 'acme', ALL, tool.name, args);
  }
  t.deepEqual(await env.server.db('terrain_runs').where({ id: run.id }).first(), run);
  t.is((await env.server.db('terrain_runs').where({ subject: 'Intrusion' })).length, 0);
  const client = await env.client('acme', ALL);
  await t.throwsAsync(client.readResource({ uri: `portico://terrain/runs/${run.id}` }), { message: /another organization/ });
  await t.throwsAsync(client.readResource({ uri: `portico://terrain/workflows/${workflow}` }), { message: /another organization/ });
  await t.throwsAsync(client.getPrompt({ name: 'terrain.brief_current_step', arguments: { run_id: run.id } }), { message: /another organization/ });
});

each('run and workflow resources and the briefing prompt carry the tenant data', async (t, env) => {
  const client = await env.client('acme', ALL);
  const { runs } = await env.ok(t, 'acme', ALL, 'terrain.list_workflow_runs', { status: 'running', limit: 100 });
  const survey = runs.find((r: any) => r.subject === 'Plot 12, Mesa Road');
  const detail = await env.ok(t, 'acme', ALL, 'terrain.get_workflow_run', { run_id: survey.id });
  const read = await client.readResource({ uri: `portico://terrain/runs/${survey.id}` });
  t.deepEqual(JSON.parse((read.contents[0] as { text: string }).text), detail);
  const workflow = JSON.parse(((await client.readResource({ uri: `portico://terrain/workflows/${survey.workflow_id}` })).contents[0] as { text: string }).text);
  t.is(workflow.name, 'Site survey');
  t.is(workflow.steps.length, 5);

  const prompt = await client.getPrompt({ name: 'terrain.brief_current_step', arguments: { run_id: survey.id } });
  const text = (prompt.messages[0].content as { text: string }).text;
  t.regex(text, /Plot 12, Mesa Road/);
  t.regex(text, /Step 1 "Book access" done/);
  t.regex(text, /Step 2 "Boundary check" done/);
  t.regex(text, /Current step 3 of 5: "Soil sampling"/);
  t.regex(text, /Take six samples at 1 m depth/);
  t.is((prompt.messages[1].content as { resource: { uri: string } }).resource.uri, `portico://terrain/runs/${survey.id}`);
});
