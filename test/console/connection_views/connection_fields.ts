/**
 * What the console lists of a connection (DESIGN.md §8: client, product, scopes, tenant, user,
 * created, last used), read through the JSON API of a full server while an MCP client uses the
 * connection: every field is the connection's own, and its use moves last-used and the call count.
 */
import { issueAccessToken } from '../../helpers/grants.js';
import { grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

type Json = any;

mcpTest('a connection is listed with its client, product, scopes in plain words, tenant, user, creation and last use', async (t, server) => {
  const created = Date.now();
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', user: 'member@acme.example', clientId: 'fields-client', scopes: ['forge.chat.read'] });
  const { token: consoleToken } = await issueAccessToken(server.db, {
    tenantId: server.tenants.acme.id, userId: server.users['admin@acme.example'], product: 'console', resource: `${server.config.apiUrl}/mcp`,
    scopes: ['console.connections.read'],
  });
  const listed = async (): Promise<Json> => {
    const response = await fetch(`${server.config.apiUrl}/mcp/v1/connections`, { headers: { authorization: `Bearer ${consoleToken}` } });
    t.is(response.status, 200);
    return ((await response.json()) as Json).connections.find((c: Json) => c.id === connection.id);
  };

  const fresh = await listed();
  t.like(fresh, {
    id: connection.id,
    client: { id: 'fields-client', name: 'Test client', self_registered: true },
    product: 'forge',
    resource: `${server.mcpUrl}/forge`,
    tenant_id: server.tenants.acme.id,
    user: { id: server.users['member@acme.example'], email: 'member@acme.example' },
    call_count: 0,
    last_used_at: null,
    revoked_at: null,
  });
  t.deepEqual(fresh.scopes, [{ scope: 'forge.chat.read', description: 'Read your organization’s AI chat conversations and their messages' }]);
  t.true(Math.abs(Date.parse(fresh.created_at) - created) < 60_000, `created ${fresh.created_at}`);

  const sessionId = await openSession(server, token, 'forge');
  const before = Date.now();
  for (const id of [1, 2]) {
    const response = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { sessionId, id });
    t.is(response.status, 200);
  }
  const used = await listed();
  t.is(used.call_count, 2, 'each tool call counts once');
  t.true(Date.parse(used.last_used_at) >= before - 1_000, `last used ${used.last_used_at}`);
  t.is(used.created_at, fresh.created_at, 'use does not move the creation time');
});
