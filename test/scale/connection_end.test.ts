/**
 * How a connection ends when two instances share one PostgreSQL: a grant past its lifetime is
 * ended by the purge (once), and a write in flight on one instance does not outlive a revocation
 * committed on the other.
 */
import test from 'ava';
import { authMount } from '../../auth/index.js';
import { consoleMount } from '../../auth/console/index.js';
import { revokeConnection } from '../../db/grant_store.js';
import { eventRelayMount } from '../../mounts.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { buildCatalog } from '../../shared/catalog.js';
import { EventBus } from '../../shared/events.js';
import { createTestDatabase, databasesUnderTest, type TestDatabase } from '../helpers/db.js';
import { auditOf, DEMO_PASSWORD, grant, openSession, rawCall, seedDemo } from '../helpers/mcp.js';
import { authorizeWithPassword, tokenRequest } from '../helpers/oauth.js';
import { until } from '../helpers/poll.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { gate, startFaultServer } from '../reliability/support.js';

const pgTest = databasesUnderTest().includes('postgres') ? test.serial : test.skip;

/** An instance with the authorization server (its purge every `purgeIntervalMs`) and the console, on `database`. */
function authInstance(database: TestDatabase, purgeIntervalMs: number, env: Record<string, string> = {}): Promise<TestServer> {
  const events = new EventBus();
  const catalog = buildCatalog(PRODUCTS);
  return startTestServer('postgres', { database, env, mounts: [eventRelayMount(events), authMount({ catalog, events, purgeIntervalMs }), consoleMount({ catalog, events })] });
}

pgTest('a connection whose grant has expired is ended by the purge (once, with two instances purging), not listed as live for ever [postgres]', async (t) => {
  const database = await createTestDatabase('postgres');
  const a = await authInstance(database, 300);
  const b = await authInstance(database, 300, { PUBLIC_AUTH_URL: a.url });
  try {
    const db = a.portico.context.db;
    await seedDemo(db);
    const sign = (resource: string, scopes: string[]) => authorizeWithPassword(a.url, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes });
    const forge = await sign(`${a.config.mcpUrl}/forge`, ['forge.chat.read']);
    const connection = await db('connections').where({ client_id: forge.clientId }).first();
    t.truthy(connection);

    // 90 days pass for this grant (TTL.Grant): its row's lifetime is over, as it will be for every connection nobody revokes.
    await db('oidc_payloads').where({ model: 'Grant', id: connection.grant_id }).update({ expires_at: Date.now() - 1000 });
    const refreshed = await tokenRequest(b.url, { grant_type: 'refresh_token', refresh_token: forge.refreshToken!, client_id: forge.clientId });
    t.is(refreshed.status, 400, 'the grant is over: the client cannot refresh');

    // Both instances purge; the console must then stop listing the connection as live.
    const consoleToken = await sign(`${a.config.apiUrl}/mcp`, ['console.connections.read']);
    const listed = async (server: TestServer, query = '') => {
      const response = await fetch(`${server.config.apiUrl}/mcp/v1/connections${query}`, { headers: { authorization: `Bearer ${consoleToken.accessToken}` } });
      const json = (await response.json()) as any; if (!json.connections) throw new Error(`${response.status} ${JSON.stringify(json)}`);
      return ((json) as { connections: Array<{ id: string; revoked_at: string | null }> }).connections.find((c) => c.id === connection.id);
    };
    const ended = await until(5_000, async () => ((await listed(b)) ? undefined : true));
    t.true(ended, 'a connection whose grant has expired (and can never be used again) is still listed as live');
    t.truthy((await listed(a, '?include_revoked=true'))?.revoked_at, 'it is listed as ended');
    const records: Array<{ args_redacted: string | null }> = await db('audit_log').where({ name: 'grant.revoke', connection_id: connection.id });
    t.is(records.length, 1, 'ended once, audited once, whichever instance purged');
    t.is(JSON.parse(records[0].args_redacted!).reason, 'grant_expired');
  } finally {
    await b.stop();
    await a.stop();
    await database.drop();
  }
});

pgTest('a write in flight on one instance does not take effect once its connection was revoked elsewhere, even before this instance hears of it [postgres]', async (t) => {
  const database = await createTestDatabase('postgres');
  const a = await startFaultServer('postgres', { database });
  const b = await startFaultServer('postgres', { database, env: { PUBLIC_AUTH_URL: a.url } });
  try {
    const { token, connection } = await grant(b, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write'] });
    const sessionId = await openSession(b, token, 'faultlab');
    const door = gate('revoked-elsewhere');
    const call = rawCall(b, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: 'revoked-elsewhere' } }, { sessionId, id: 1 });
    await door.entered;
    // Instance A (its console, or the admin CLI) commits the revocation; its notification has not
    // reached B yet (delivery is asynchronous, and may be lost: docs/performance.md).
    await a.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' }));
    door.release();
    const response = await call;
    const body = response.body;
    t.false(Boolean(body?.result && !body.result.isError), `the call succeeded after its connection was revoked: ${response.text.slice(0, 200)}`);
    t.deepEqual(await b.markers('revoked-elsewhere'), [], 'its effect persisted after the revocation committed');
    const records = await auditOf(b, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
    t.false(records.some((r) => r.outcome === 'ok'), JSON.stringify(records.map((r) => r.outcome)));
  } finally {
    await b.stop();
    await a.stop();
    await database.drop();
  }
});
