/**
 * PostgreSQL: a person made to report to their manager's manager while that manager is offboarded
 * (which moves the same person there). The offboarding holds the report's row while its foreign
 * key takes a KEY SHARE lock on the new manager; the update holds the new manager's row before it
 * takes the report's. Neither may wait for the other: both calls succeed, and no deadlock is
 * broken by PostgreSQL (reported to the caller as `conflict`).
 */
import { mcpPostgresTest } from '../helpers/mcp.js';
import { people } from '../../mcp/products/people/index.js';
import { call, confirmation, connections, inLine } from './parallel_support.js';

const today = () => new Date().toISOString().slice(0, 10);

mcpPostgresTest('a report moved to the grand-manager while the manager is offboarded: both calls succeed', async (t, server) => {
  t.timeout(60_000);
  const [{ client, close }, other] = await connections(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) }, 2);
  try {
    const person = async (name: string, extra: Record<string, unknown> = {}) => {
      const created = await call(client, 'people.create_person', { full_name: name, email: `${name.toLowerCase().replace(/ /g, '.')}@acme.example`, status: 'active', ...extra });
      if (!created.ok) throw new Error(JSON.stringify(created));
      return created.value.id as string;
    };
    const boss = await person('Big Boss');
    const manager = await person('Leaving Manager', { manager_id: boss });
    const report = await person('Moving Report', { manager_id: manager });
    const offboardNow = await confirmation(client, 'people.offboard_person', { person_id: manager, last_day: today(), reason: 'resignation' });

    // The report's row is held for a moment, so that the offboarding reaches it first.
    const outcomes = await inLine(t, server.db, 'people_profiles', report, [
      offboardNow,
      () => call(other.client, 'people.update_person', { person_id: report, manager_id: boss, job_title: 'Lead' }),
    ]);
    t.deepEqual(outcomes.map((o) => o.code ?? 'ok'), ['ok', 'ok'], JSON.stringify(outcomes.map((o) => o.value?.message ?? 'ok')));
    const row = await server.db('people_profiles').where({ id: report }).first();
    t.is(row.manager_id, boss);
    t.is(row.job_title, 'Lead');
  } finally {
    await close();
    await other.close();
  }
});
