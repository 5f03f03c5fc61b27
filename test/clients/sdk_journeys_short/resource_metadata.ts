/**
 * RFC 9728 §3.3 / §7.3: metadata found through a 401's `resource_metadata` is used only if its
 * `resource` is identical to the URL the client called; strict clients refuse a prefix. Every
 * 401 (and the 403 step-up) of the MCP endpoints and the console API names such metadata, and a
 * client that asks for a token for that resource (RFC 8707) gets one that works there.
 */
import { authenticateBearer } from '../../../db/grant_store.js';
import { DEMO_PASSWORD, grant, MCP_HEADERS, mcpTest, openSession } from '../../helpers/mcp.js';
import { authorizeCode, authorizeWithPassword, tokenRequest } from '../../helpers/oauth.js';

/** The `resource_metadata` URL of a `WWW-Authenticate: Bearer …` challenge. */
function metadataUrlOf(response: Response): string | undefined {
  return /resource_metadata="([^"]+)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1];
}

async function resourceNamedBy(response: Response): Promise<string | undefined> {
  const url = metadataUrlOf(response);
  if (!url) return undefined;
  const metadata = await fetch(url);
  return metadata.status === 200 ? ((await metadata.json()) as { resource?: string }).resource : `${metadata.status} at ${url}`;
}

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'strict', version: '1' } } });

mcpTest('every 401 and step-up 403 names resource metadata whose resource is exactly the URL called', async (t, server) => {
  const api = `${server.config.apiUrl}/mcp/v1`;
  const { connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  for (const url of [`${api}/connections`, `${api}/connections/${connection.id}`, `${api}/audit`, `${api}/audit/export`, `${api}/audit/verify`]) {
    const refused = await fetch(url);
    t.is(refused.status, 401, url);
    t.is(await resourceNamedBy(refused), url, url);
  }
  for (const url of [`${server.mcpUrl}/forge`, `${server.mcpUrl}/forge/`, `${server.mcpUrl}/midas`]) {
    const refused = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: initialize });
    t.is(refused.status, 401, url);
    t.is(await resourceNamedBy(refused), url, url);
  }

  // The step-up challenges (a scope the token lacks) too.
  const { token } = await grant(server, { product: 'console', resource: `${server.config.apiUrl}/mcp`, tenant: 'acme', scopes: ['console.audit.read'] });
  const stepUp = await fetch(`${api}/connections`, { headers: { authorization: `Bearer ${token}` } });
  t.is(stepUp.status, 403);
  t.regex(stepUp.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
  t.is(await resourceNamedBy(stepUp), `${api}/connections`);
  const forge = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  for (const product of ['forge', 'forge/']) {
    const sessionId = await openSession(server, forge.token, product);
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forge.create_conversation', arguments: { title: 'x' } } });
    const refused = await fetch(`${server.mcpUrl}/${product}`, {
      method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${forge.token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' }, body: call,
    });
    t.is(refused.status, 403, product);
    t.is(await resourceNamedBy(refused), `${server.mcpUrl}/${product}`, product);
  }
});

mcpTest('a client that asks for the resource a console API 401 names gets a console token, and refreshes it under another API URL', async (t, server) => {
  const api = `${server.config.apiUrl}/mcp/v1`;
  const resource = await resourceNamedBy(await fetch(`${api}/audit`));
  t.is(resource, `${api}/audit`);
  const scopes = ['console.audit.read', 'console.connections.read'];
  const { code, clientId, redirectUri, verifier } = await authorizeCode(server.url, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes });
  const exchanged = await tokenRequest(server.url, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, resource: resource! });
  t.is(exchanged.status, 200, await exchanged.clone().text());
  const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
  // The token's audience is the console API, whichever of its URLs named it (RFC 8707 §2).
  t.is((await authenticateBearer(server.db, tokens.access_token, `${server.config.apiUrl}/mcp`)).product, 'console');
  for (const path of ['/audit', '/connections']) {
    const response = await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    t.is(response.status, 200, path);
  }
  // Later a 401 at another URL of the API names that URL: a refresh for it is the same resource.
  const refreshed = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId, resource: `${api}/connections` });
  t.is(refreshed.status, 200, await refreshed.clone().text());
  const fresh = (await refreshed.json()) as { access_token: string };
  t.is((await fetch(`${api}/connections`, { headers: { authorization: `Bearer ${fresh.access_token}` } })).status, 200);

  // A URL outside the API names no resource; the console's pages are no resource either.
  for (const outside of [`${server.config.apiUrl}/mcp/connections`, `${server.config.apiUrl}/other`]) {
    const refused = await authorizeWithPassword(server.url, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource: outside, scopes }).catch((error: Error) => error);
    t.true(refused instanceof Error, outside);
  }
});
