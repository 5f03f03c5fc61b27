/**
 * docs/security.md ("Rate limit") and docs/errors.md: refused requests are not audited, "except
 * the first refused call of each window, so the tenant's log shows that the limit was reached".
 * That holds whatever request the limit happened to fall on first: a client that lists tools
 * between calls (most do) reaches its limit on a tools/list as often as on a call.
 */
import { auditOf, grant, openSession, rawCall } from '../../helpers/mcp.js';
import { mcpTest } from '../../helpers/mcp.js';

mcpTest('the first refused call of a window is audited even when the limit fell on a listing first', async (t, server) => {
  const limit = server.config.rateLimitPerMinute;
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge'); // initialize + initialized: two requests
  for (let i = 2; i < limit; i++) t.is((await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId, id: i })).status, 200);
  // The first refused request of the window is a listing, which is never audited …
  t.is((await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId, id: 100 })).status, 429);
  // … and then the client calls a tool, refused too.
  for (let i = 0; i < 3; i++) {
    const refused = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { sessionId, id: 200 + i });
    t.is(refused.status, 429);
  }
  const records = await auditOf(server, 'acme', { connection_id: connection.id, outcome: 'rate_limited' });
  t.is(records.length, 1, 'one record shows the tenant that the limit was reached');
  t.like(records[0], { kind: 'tool', name: 'forge.list_conversations', product: 'forge', user_id: connection.user_id, client_id: connection.client_id });
}, { env: { RATE_LIMIT_PER_MINUTE: '5' } });
