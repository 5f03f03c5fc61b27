/**
 * A revocation committed while an instance's event relay was down (its LISTEN connection lost:
 * a PostgreSQL restart, a failover, a killed backend) reaches no listener on that instance. Its
 * principal cache is off while the relay is down, so the next request is refused anyway; the open
 * GET streams of the revoked connection must close too, once the relay hears again.
 */
import test from 'ava';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { revokeConnection } from '../../db/grant_store.js';
import { channelFor, relayName } from '../../db/notify.js';
import { databasesUnderTest } from '../helpers/db.js';
import { grant, openSession, startMcpServer } from '../helpers/mcp.js';

const pgTest = databasesUnderTest().includes('postgres') ? test.serial : test.skip;

pgTest('a connection revoked while the relay was down has its open GET streams closed when the relay hears again [postgres]', async (t) => {
  const server = await startMcpServer('postgres');
  const admin = server.database.connect();
  try {
    const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
    const sessionId = await openSession(server, token, 'forge');
    const stream = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } });
    t.is(stream.status, 200);
    const reader = stream.body!.getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })();

    // This instance's LISTEN backend is killed; while it is down, the connection is revoked and
    // no event is published (it would not have arrived anyway).
    const channel = channelFor(server.portico.context.secrets.macKey);
    const killed = await admin.raw('select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ?', [relayName(channel)]);
    t.is(killed.rows.length, 1, 'the instance’s listener was terminated');
    await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' }));

    const closed = await Promise.race([ended, new Promise<false>((resolve) => setTimeout(() => resolve(false), 15_000))]);
    t.true(closed, 'the GET stream closed once the relay was listening again');
  } finally {
    await admin.destroy();
    await server.close();
  }
});
