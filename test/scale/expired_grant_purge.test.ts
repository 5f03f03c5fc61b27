/**
 * The purge timer ends expired grants' connections (endExpiredGrants) and then deletes expired
 * rows (purgeExpired), both as of one instant: a grant that expires while the first step runs (it
 * waits on a locked connection row, a write tool's transaction for instance) is left to the next
 * run, not deleted by the second step with its connection still listed as live.
 */
import test from 'ava';
import { authMount } from '../../auth/index.js';
import { consoleMount } from '../../auth/console/index.js';
import { eventRelayMount } from '../../mounts.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { buildCatalog } from '../../shared/catalog.js';
import { EventBus } from '../../shared/events.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { DEMO_PASSWORD, seedDemo } from '../helpers/mcp.js';
import { authorizeWithPassword } from '../helpers/oauth.js';
import { until } from '../helpers/poll.js';
import { startTestServer } from '../helpers/server.js';

const pgTest = databasesUnderTest().includes('postgres') ? test.serial : test.skip;

pgTest('a grant that expires while the purge ends other expired grants still has its connection ended, not deleted silently [postgres]', async (t) => {
  t.timeout(60_000);
  const database = await createTestDatabase('postgres');
  const events = new EventBus();
  const catalog = buildCatalog(PRODUCTS);
  const server = await startTestServer('postgres', { database, mounts: [eventRelayMount(events), authMount({ catalog, events, purgeIntervalMs: 1_500 }), consoleMount({ catalog, events })] });
  const other = database.connect();
  try {
    const db = server.portico.context.db;
    await seedDemo(db);
    const sign = (scopes: string[]) => authorizeWithPassword(server.url, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource: `${server.config.mcpUrl}/forge`, scopes });
    const first = await db('connections').where({ client_id: (await sign(['forge.chat.read'])).clientId }).first();
    const second = await db('connections').where({ client_id: (await sign(['forge.chat.read'])).clientId }).first();

    // The first connection's row is held (a write tool's transaction touches it as its commit point).
    const holder = await other.transaction();
    await holder('connections').where({ id: first.id }).forUpdate().select('id');
    const holderPid: number = (await holder.raw('select pg_backend_pid() as pid')).rows[0].pid;
    // The first grant is past its lifetime: the next purge run selects it and waits on the row.
    await db('oidc_payloads').where({ model: 'Grant', id: first.grant_id }).update({ expires_at: Date.now() - 1_000 });
    const waiting = await until(10_000, async () => {
      const rows = (await other.raw('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [holderPid])).rows;
      return rows[0].n > 0 ? true : undefined;
    });
    t.true(waiting, 'the purge run did not reach the held connection row');
    // Meanwhile the second grant's 90 days end too (after the run selected the expired grants).
    await db('oidc_payloads').where({ model: 'Grant', id: second.grant_id }).update({ expires_at: Date.now() });
    await new Promise((resolve) => setTimeout(resolve, 20)); // the clock passes its end before the waiting run goes on
    await holder.commit();

    const firstEnded = await until(10_000, async () => ((await db('connections').where({ id: first.id }).first()).revoked_at ? true : undefined));
    t.true(firstEnded, 'the first connection was ended');
    // A few more runs of the purge: the second connection must be ended too.
    const secondEnded = await until(6_000, async () => ((await db('connections').where({ id: second.id }).first()).revoked_at ? true : undefined));
    const grantRow = await db('oidc_payloads').where({ model: 'Grant', id: second.grant_id }).first();
    t.true(secondEnded, `the second connection is still live for ever (its grant row ${grantRow ? 'remains' : 'was deleted by the purge'})`);
    const records: Array<{ args_redacted: string | null }> = await db('audit_log').where({ name: 'grant.revoke', connection_id: second.id });
    t.is(records.length, 1, 'its end is audited');
  } finally {
    await other.destroy();
    await server.stop();
    await database.drop();
  }
});
