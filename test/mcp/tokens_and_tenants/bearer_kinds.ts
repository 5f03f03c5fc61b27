/**
 * What counts as a bearer token at the MCP servers and the console API (DESIGN.md §6 step 1,
 * MCP authorization "Token Requirements", RFC 6750 §2.1): an access token of a live connection, in
 * the Authorization header. A refresh token or a registration access token of the same flow is not
 * one, and an access token in the query string is never read. trust.test.ts checks the query
 * string with another product's token, which is refused for its audience whatever the query
 * handling; here the token is a good one.
 */
import { authenticateBearer, hashTokenId } from '../../../db/grant_store.js';
import { isAppError } from '../../../shared/errors.js';
import { authorizeWithPassword, registerClient } from '../../helpers/oauth.js';
import { DEMO_PASSWORD, grant, MCP_HEADERS, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

mcpTest('only an access token in the Authorization header is a bearer token: refresh and registration tokens and query strings are refused', async (t, server) => {
  const forge = `${server.mcpUrl}/forge`;
  const client = await registerClient(server.url);
  const tokens = await authorizeWithPassword(server.url, {
    email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource: forge, scopes: ['forge.chat.read'], clientId: client.client_id,
  });
  t.truthy(tokens.refreshToken);
  const sessionId = await openSession(server, tokens.accessToken, 'forge');
  t.is((await rawCall(server, tokens.accessToken, 'forge', 'tools/list', {}, { sessionId })).status, 200, 'the access token works');

  for (const [label, token] of [['refresh token', tokens.refreshToken!], ['registration access token', client.registration_access_token!]]) {
    const initialize = await rawCall(server, token, 'forge', 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    t.is(initialize.status, 401, `${label}: ${initialize.text.slice(0, 200)}`);
    t.is(initialize.body.error?.data?.code, 'invalid_token', label);
    const call = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId });
    t.is(call.status, 401, label);
    const error = await authenticateBearer(server.db, token, forge).catch((e: unknown) => e);
    t.true(isAppError(error) && error.code === 'invalid_token', label);
    const api = await fetch(`${server.url}/api/mcp/v1/connections`, { headers: { authorization: `Bearer ${token}` } });
    t.is(api.status, 401, `${label} at the console API`);
  }

  // A good access token, but in the query string (or a form field): never read.
  for (const init of [
    { url: `${forge}?access_token=${tokens.accessToken}`, body: LIST, headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId } },
    { url: `${forge}?access_token=${tokens.accessToken}`, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }), headers: MCP_HEADERS },
  ]) {
    const response = await fetch(init.url, { method: 'POST', headers: init.headers, body: init.body });
    t.is(response.status, 401, await response.text());
  }
  const get = await fetch(`${forge}?access_token=${tokens.accessToken}`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  t.is(get.status, 401);
  await get.body?.cancel();
});

mcpTest('a revoked access token and a revoked connection are each refused on their own', async (t, server) => {
  const forge = `${server.mcpUrl}/forge`;
  const refused = async (token: string, label: string) => {
    const error = await authenticateBearer(server.db, token, forge).catch((e: unknown) => e);
    t.true(isAppError(error) && error.code === 'connection_revoked', label);
    const call = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} });
    t.is(call.status, 401, `${label}: ${call.text.slice(0, 200)}`);
    t.is(call.body.error?.data?.code, 'connection_revoked', label);
  };
  // The token row marked revoked, its connection not (yet): refused.
  const a = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  await server.db('oidc_payloads').where({ model: 'AccessToken', id: hashTokenId(a.token) }).update({ revoked_at: Date.now() });
  await refused(a.token, 'token revoked');
  // The connection revoked, a token of it not marked (one issued by a refresh racing the revocation): refused.
  const b = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  await server.db('connections').where({ id: b.connection.id }).update({ revoked_at: Date.now() });
  await refused(b.token, 'connection revoked');
});
