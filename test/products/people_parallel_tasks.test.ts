/**
 * An AI client often calls tools in parallel: ticking off every task of an onboarding checklist at
 * once must complete each task, number the person's history without a gap or a clash, and make the
 * person active once the last open task is done, on every database.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connect, mcpTest } from '../helpers/mcp.js';
import { people } from '../../mcp/products/people/index.js';

const inDays = (days: number) => new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + days * 86_400_000).toISOString().slice(0, 10);

mcpTest('completing every onboarding task of a person in parallel completes each once and makes the person active', async (t, server) => {
  const { client, close } = await connect(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) });
  const call = async (name: string, args: Record<string, unknown>) => {
    const outcome = await client.callTool({ name, arguments: args }).then(
      (result) => ({ ok: !result.isError, value: result.structuredContent as any }),
      (error: McpError) => ({ ok: false, value: { code: (error as McpError & { data?: { code?: string } }).data?.code, message: error.message } }),
    );
    return outcome;
  };
  try {
    for (let round = 0; round < 3; round += 1) {
      const created = await call('people.create_person', { full_name: `Parallel Hire ${round}`, email: `parallel.hire.${round}@acme.example`, start_date: inDays(7) });
      t.true(created.ok, JSON.stringify(created.value));
      const started = await call('people.start_onboarding', { person_id: created.value.id });
      t.true(started.ok, JSON.stringify(started.value));
      const tasks: Array<{ id: string }> = started.value.onboarding_tasks;
      t.true(tasks.length >= 2);

      const outcomes = await Promise.all(tasks.map((task) => call('people.complete_onboarding_task', { task_id: task.id })));
      t.deepEqual(outcomes.filter((o) => !o.ok).map((o) => o.value), [], 'every task was completed');

      const person = await server.db('people_profiles').where({ id: created.value.id }).first();
      t.is(person.status, 'active', 'the last open task made the person active');
      const open = await server.db('people_onboarding_tasks').where({ person_id: created.value.id, status: 'open' });
      t.is(open.length, 0);
      const events: Array<{ sequence: number; kind: string }> = await server.db('people_lifecycle_events').where({ person_id: created.value.id }).orderBy('sequence');
      t.deepEqual(events.map((e) => Number(e.sequence)), events.map((_, i) => i + 1), 'history numbered 1..n');
      t.is(events.filter((e) => e.kind === 'onboarding_task_completed').length, tasks.length);
      t.is(events.filter((e) => e.kind === 'onboarding_completed').length, 1);
    }
  } finally {
    await close();
  }
});
