/**
 * The principal cache keeps a token's principal at most until the token expires (and 30 s). Every
 * second each instance asks the database which of the connections behind its open sessions and
 * cached principals were revoked (mcp/index.ts sweepRevoked). Principals of tokens that expired,
 * looked up once and never again, must leave the cache and that question: otherwise up to 10,000
 * of them stay for good, and the instance asks about their connections every second, for ever.
 */
import { grant, mcpTest, MCP_HEADERS } from '../helpers/mcp.js';

mcpTest('principals of expired tokens leave the cache: the revocation sweep stops asking about their connections', async (t, server) => {
  const issued = await Promise.all(Array.from({ length: 20 }, () => grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'], ttlSeconds: 3 })));
  // Authenticated (and cached), without opening a session: a request with no session id is refused after the token check.
  for (const { token } of issued) {
    const response = await fetch(`${server.mcpUrl}/forge`, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    t.is(response.status, 400, 'a request without a session: the token was accepted');
  }
  const ours = new Set(issued.map(({ connection }) => connection.id));
  const asked = new Set<string>();
  const watch = (query: { sql: string; bindings?: unknown[] }) => {
    if (/from [`"]connections[`"] where [`"]id[`"] in/.test(query.sql)) for (const binding of query.bindings ?? []) if (ours.has(String(binding))) asked.add(String(binding));
  };
  // The tokens expire 3 s after they were issued; the sweep runs every second.
  await new Promise((resolve) => setTimeout(resolve, 4_500));
  server.db.on('query', watch);
  try {
    await new Promise((resolve) => setTimeout(resolve, 2_500));
  } finally {
    server.db.off('query', watch);
  }
  t.is(asked.size, 0, `${asked.size} of 20 connections whose tokens expired are still asked about every second`);
});
