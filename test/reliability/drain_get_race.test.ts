/**
 * Shutdown ends the GET streams and refuses new MCP requests, then waits only for calls in flight.
 * A GET that passed the draining check just before shutdown began (its token still being checked
 * against the database) opens its stream after the others were ended: it is ended at once too,
 * so shutdown does not wait the whole DRAIN_MS for it.
 */
import test from 'ava';
import knex from 'knex';
import { PrincipalCache } from '../../mcp/principal_cache.js';
import { databasesUnderTest, tokenLookupSent } from '../helpers/db.js';
import { grant, MCP_HEADERS, openSession, startMcpServer } from '../helpers/mcp.js';

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;

pgTest('a GET stream opened by a request in flight when shutdown begins is ended too, without waiting for the drain deadline [postgres]', async (t) => {
  t.timeout(40_000);
  const server = await startMcpServer('postgres');
  const locker = knex({ client: 'pg', connection: server.database.url });
  const realGet = PrincipalCache.prototype.get;
  try {
    const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
    const sessionId = await openSession(server, token, 'forge');
    // The next GET checks its token in the database (as a fresh token, or one the cache dropped, does) ...
    PrincipalCache.prototype.get = () => undefined;
    // ... which answers slowly at that moment (a lock, a busy database).
    const trx = await locker.transaction();
    await trx.raw('lock table oidc_payloads in access exclusive mode');
    // The GET's token check is sent to the database once the GET has passed the draining check.
    const checking = tokenLookupSent(server.db);
    // Registered last, it runs after the MCP host's drain (which ended the open streams).
    const drained = new Promise<void>((resolve) => server.portico.context.onDrain(() => resolve()));
    const stream = fetch(`${server.mcpUrl}/forge`, {
      method: 'GET',
      headers: { ...MCP_HEADERS, accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': sessionId },
    }).then(async (response) => ({ status: response.status, text: await response.text().catch((e: Error) => `cut: ${e.message}`) }), (e: Error) => ({ status: 0, text: `failed: ${e.message}` }));
    await checking;
    const stopping = server.stop();
    await drained;
    await trx.commit();
    await stopping;
    // Ended by the server, the stream's body is complete; left open, shutdown would have cut its
    // socket at the drain deadline and the body would fail ("terminated").
    const answer = await stream;
    t.is(answer.status, 200, answer.text.slice(0, 120));
    t.false(answer.text.startsWith('cut:'), `the stream was cut at the drain deadline instead of ended: ${answer.text.slice(0, 120)}`);
  } finally {
    PrincipalCache.prototype.get = realGet;
    await locker.destroy();
    await server.close();
  }
});
