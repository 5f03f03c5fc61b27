/**
 * PostgreSQL: a person made to report to their manager's manager while that manager is offboarded
 * (which moves the same person there). The offboarding holds the report's row while its foreign
 * key takes a KEY SHARE lock on the new manager; the update holds the new manager's row before it
 * takes the report's. Neither may wait for the other: both calls succeed, and no deadlock is
 * broken by PostgreSQL (reported to the caller as `conflict`).
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { connect, startMcpServer } from '../helpers/mcp.js';
import { people } from '../../mcp/products/people/index.js';
import { call, confirmation } from './parallel_support.js';

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;
const today = () => new Date().toISOString().slice(0, 10);

async function until<T>(ms: number, probe: () => Promise<T | undefined>): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

pgTest('a report moved to the grand-manager while the manager is offboarded: both calls succeed [postgres]', async (t) => {
  t.timeout(60_000);
  const server = await startMcpServer('postgres');
  // Two connections: the calls of one take turns at its row (the pipeline's commit point).
  const { client, close } = await connect(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) });
  const other = await connect(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) });
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
    const holder = await server.db.transaction();
    await holder('people_profiles').where({ id: report }).forUpdate().select('id');
    // Waiters on the held row, directly or queued behind one that waits for it.
    const waiting = (n: number) => until(10_000, async () => {
      const rows = (await server.db.raw("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")).rows;
      return rows[0].n >= n ? true : undefined;
    });
    const offboarded = offboardNow();
    t.true(await waiting(1), 'the offboarding reached the report');
    const moved = call(other.client, 'people.update_person', { person_id: report, manager_id: boss, job_title: 'Lead' });
    t.true(await waiting(2), 'the update reached the report');
    await holder.commit();

    const outcomes = await Promise.all([offboarded, moved]);
    t.deepEqual(outcomes.map((o) => o.code ?? 'ok'), ['ok', 'ok'], JSON.stringify(outcomes.map((o) => o.value?.message ?? 'ok')));
    const row = await server.db('people_profiles').where({ id: report }).first();
    t.is(row.manager_id, boss);
    t.is(row.job_title, 'Lead');
  } finally {
    await close();
    await other.close();
    await server.close();
  }
});
