/**
 * A revocation announced on the event bus takes effect at once on this instance: the cached
 * principal goes and the connection's GET stream closes. The once-a-second sweep (mcp/index.ts
 * sweepRevoked) would close them too, a second later, so it is slowed to ten minutes here: what
 * closes the stream within seconds is the event, and nothing else.
 */
import { revokeConnection } from '../../../db/grant_store.js';
import { grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

const LIST = { name: 'forge.list_conversations', arguments: {} };

mcpTest('a revocation event closes the connection’s stream and drops its cached token without waiting for the sweep', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  t.is((await rawCall(server, token, 'forge', 'tools/call', LIST, { sessionId })).status, 200, 'the principal is cached now');
  const stream = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  t.is(stream.status, 200);
  const reader = stream.body!.getReader();
  const ended = (async () => {
    while (!(await reader.read()).done);
    return 'closed';
  })();

  // Revoked behind the cache's back, then announced: only the event tells the host.
  await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' }));
  await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((resolve) => (timer = setTimeout(resolve, 5_000, 'still open')));
  const outcome = await Promise.race([ended, deadline]);
  clearTimeout(timer);
  if (outcome !== 'closed') await reader.cancel();
  t.is(outcome, 'closed');

  const after = await rawCall(server, token, 'forge', 'tools/call', LIST);
  t.is(after.status, 401);
  t.is(after.body.error.data.code, 'connection_revoked');
}, { revokedSweepMs: 600_000 });
