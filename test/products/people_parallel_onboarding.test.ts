/**
 * PostgreSQL: onboarding started while the person's start date is being changed starts from the
 * date that change stored: it keeps that date and counts the checklist's due dates from it.
 */
import { people } from '../../mcp/products/people/index.js';
import { mcpPostgresTest } from '../helpers/mcp.js';
import { call, connections, inLine } from './parallel_support.js';

const inDays = (days: number) => new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 + days * 86_400_000).toISOString().slice(0, 10);

mcpPostgresTest('onboarding that waits for a change of the start date starts on the changed date', async (t, server) => {
  const [a, b] = await connections(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) }, 2);
  try {
    const created = await call(a.client, 'people.create_person', { full_name: 'Moved Start', email: 'moved.start@acme.example', start_date: inDays(7) });
    t.true(created.ok, JSON.stringify(created));
    const id: string = created.value.id;
    const [moved, started] = await inLine(t, server.db, 'people_profiles', id, [
      () => call(a.client, 'people.update_person', { person_id: id, start_date: inDays(14) }),
      () => call(b.client, 'people.start_onboarding', { person_id: id, tasks: [{ title: 'Laptop', owner: 'it', due_in_days: 1 }] }),
    ]);
    t.true(moved.ok && started.ok, JSON.stringify([moved, started]));
    t.is(started.value.start_date, inDays(14));
    t.is(started.value.onboarding_tasks[0].due_date, inDays(15));
    const row = await server.db('people_profiles').where({ id }).first();
    t.is(new Date(Number(row.start_date)).toISOString().slice(0, 10), inDays(14), 'the changed start date is kept');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
