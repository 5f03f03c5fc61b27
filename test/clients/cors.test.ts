/**
 * CORS for browser-based clients (Fetch standard): discovery, Protected Resource Metadata,
 * registration, token and the MCP endpoint answer preflights with what an MCP client sends and
 * expose what it must read; the authorization endpoint has no CORS at all (it is a page the
 * person's browser navigates to, never something a script reads).
 */
import { DEMO_PASSWORD, grant, MCP_HEADERS, mcpTest, readRaw } from '../helpers/mcp.js';
import { authorizeCode, registerClient } from '../helpers/oauth.js';

const INSPECTOR = 'http://localhost:6274';
const MCP_REQUEST_HEADERS = 'authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id';

function preflight(url: string, origin: string, method: string, headers: string): Promise<Response> {
  return fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
}

function listOf(value: string | null): string[] {
  return (value ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
}

mcpTest('discovery and Protected Resource Metadata: any origin may read them, MCP-Protocol-Version included', async (t, server) => {
  const origin = 'https://claude.ai';
  for (const url of [`${server.config.authUrl}/.well-known/oauth-authorization-server`, `${server.config.authUrl}/.well-known/openid-configuration`]) {
    const pre = await preflight(url, origin, 'GET', 'mcp-protocol-version');
    t.true(pre.status === 204 || pre.status === 200, url);
    t.truthy(pre.headers.get('access-control-allow-origin'), url);
    t.true(listOf(pre.headers.get('access-control-allow-headers')).includes('mcp-protocol-version'), `${url}: ${pre.headers.get('access-control-allow-headers')}`);
    const get = await fetch(url, { headers: { origin, 'mcp-protocol-version': '2025-11-25' } });
    t.is(get.status, 200);
    t.true(['*', origin].includes(get.headers.get('access-control-allow-origin')!), url);
  }

  const prm = `${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/forge`;
  const pre = await preflight(prm, origin, 'GET', 'mcp-protocol-version');
  t.is(pre.status, 204);
  t.is(pre.headers.get('access-control-allow-origin'), '*');
  t.true(listOf(pre.headers.get('access-control-allow-headers')).includes('mcp-protocol-version'));
  const get = await fetch(prm, { headers: { origin } });
  t.is(get.status, 200);
  t.is(get.headers.get('access-control-allow-origin'), '*');
  t.is(((await get.json()) as any).resource, `${server.mcpUrl}/forge`);

  for (const doc of [`${server.mcpUrl}/`, `${server.mcpUrl}/forge/list_tools`, `${server.mcpUrl}/forge/client_config`]) {
    const docPre = await preflight(doc, origin, 'GET', 'mcp-protocol-version');
    t.is(docPre.status, 204, doc);
    t.is(docPre.headers.get('access-control-allow-origin'), '*', doc);
    t.is((await fetch(doc, { headers: { origin } })).headers.get('access-control-allow-origin'), '*', doc);
  }
});

mcpTest('registration: preflight and POST from a browser origin', async (t, server) => {
  const url = `${server.config.authUrl}/oauth/register`;
  const pre = await preflight(url, INSPECTOR, 'POST', 'content-type');
  t.is(pre.status, 204);
  t.is(pre.headers.get('access-control-allow-origin'), '*');
  t.true(listOf(pre.headers.get('access-control-allow-headers')).includes('content-type'));
  t.true(listOf(pre.headers.get('access-control-allow-methods')).includes('post'));
  const response = await fetch(url, {
    method: 'POST', headers: { origin: INSPECTOR, 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Inspector', redirect_uris: [`${INSPECTOR}/oauth/callback`], token_endpoint_auth_method: 'none' }),
  });
  t.is(response.status, 201);
  t.is(response.headers.get('access-control-allow-origin'), '*');
});

mcpTest('token endpoint: a browser client may redeem its code from the origin of its redirect URI, and no other origin may', async (t, server) => {
  const base = server.config.authUrl;
  const redirectUri = `${INSPECTOR}/oauth/callback`;
  const client = await registerClient(base, { client_name: 'Inspector', redirect_uris: [redirectUri] });
  const url = `${base}/oauth/token`;

  const pre = await preflight(url, INSPECTOR, 'POST', 'content-type');
  t.true(pre.status === 204 || pre.status === 200);
  t.is(pre.headers.get('access-control-allow-origin'), INSPECTOR);

  const resource = `${server.mcpUrl}/forge`;
  const redeem = async (origin: string) => {
    const { code, verifier } = await authorizeCode(base, { email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes: ['forge.chat.read'], clientId: client.client_id, redirectUri });
    return fetch(url, {
      method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: client.client_id, redirect_uri: redirectUri, code_verifier: verifier, resource }).toString(),
    });
  };
  const allowed = await redeem(INSPECTOR);
  t.is(allowed.status, 200);
  t.is(allowed.headers.get('access-control-allow-origin'), INSPECTOR);
  t.truthy(((await allowed.json()) as any).access_token);

  const foreign = await redeem('https://evil.example');
  t.not(foreign.headers.get('access-control-allow-origin'), 'https://evil.example');
  t.not(foreign.headers.get('access-control-allow-origin'), '*');
});

mcpTest('the authorization endpoint has no CORS: neither a preflight nor a request from a script is allowed to read it', async (t, server) => {
  const client = await registerClient(server.config.authUrl, { client_name: 'Inspector', redirect_uris: [`${INSPECTOR}/oauth/callback`] });
  const url = `${server.config.authUrl}/oauth/authorize?${new URLSearchParams({
    client_id: client.client_id, redirect_uri: `${INSPECTOR}/oauth/callback`, response_type: 'code', scope: 'forge.chat.read', state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', resource: `${server.mcpUrl}/forge`,
  })}`;
  const pre = await preflight(url, INSPECTOR, 'GET', 'authorization');
  t.is(pre.headers.get('access-control-allow-origin'), null);
  t.is(pre.headers.get('access-control-allow-headers'), null);
  const get = await fetch(url, { headers: { origin: INSPECTOR }, redirect: 'manual' });
  t.is(get.headers.get('access-control-allow-origin'), null);
});

mcpTest('the MCP endpoint: preflight with the headers MCP needs, and the session id and challenges exposed, for Portico’s own and configured origins', async (t, server) => {
  const url = `${server.mcpUrl}/forge`;
  for (const origin of [INSPECTOR, new URL(server.url).origin]) {
    const pre = await preflight(url, origin, 'POST', MCP_REQUEST_HEADERS);
    t.is(pre.status, 204, origin);
    t.is(pre.headers.get('access-control-allow-origin'), origin);
    t.is(pre.headers.get('access-control-allow-credentials'), null, 'bearer tokens, never cookies');
    t.deepEqual(listOf(pre.headers.get('access-control-allow-methods')).sort(), ['delete', 'get', 'post']);
    const allowedHeaders = listOf(pre.headers.get('access-control-allow-headers'));
    for (const header of listOf(MCP_REQUEST_HEADERS)) t.true(allowedHeaders.includes(header), `${header} allowed`);
    t.regex(pre.headers.get('vary') ?? '', /origin/i);
  }

  // A 401 must be readable by the script: its WWW-Authenticate starts the OAuth flow.
  const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'browser', version: '1' } } });
  const anonymous = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, origin: INSPECTOR }, body: init });
  t.is(anonymous.status, 401);
  t.is(anonymous.headers.get('access-control-allow-origin'), INSPECTOR);
  t.true(listOf(anonymous.headers.get('access-control-expose-headers')).includes('www-authenticate'));

  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const response = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, origin: INSPECTOR, authorization: `Bearer ${token}` }, body: init });
  const raw = await readRaw(response, 0);
  t.is(raw.status, 200);
  t.truthy(raw.sessionId);
  t.is(response.headers.get('access-control-allow-origin'), INSPECTOR);
  t.true(listOf(response.headers.get('access-control-expose-headers')).includes('mcp-session-id'));
  t.is(raw.body.result.serverInfo.name, 'portico-forge');

  // A write tool from a read-only grant: the step-up challenge is readable too.
  const headers = { ...MCP_HEADERS, origin: INSPECTOR, authorization: `Bearer ${token}`, 'mcp-session-id': raw.sessionId!, 'mcp-protocol-version': '2025-11-25' };
  await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  const refused = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forge.create_conversation', arguments: { title: 'x' } } }) });
  t.is(refused.status, 403);
  t.is(refused.headers.get('access-control-allow-origin'), INSPECTOR);
  t.regex(refused.headers.get('www-authenticate') ?? '', /insufficient_scope/);
}, { env: { MCP_CORS_ORIGINS: INSPECTOR } });

mcpTest('the MCP endpoint refuses other origins: preflight 403, requests 403, no CORS headers', async (t, server) => {
  const url = `${server.mcpUrl}/forge`;
  const pre = await preflight(url, 'https://evil.example', 'POST', MCP_REQUEST_HEADERS);
  t.is(pre.status, 403);
  t.is(pre.headers.get('access-control-allow-origin'), null);
  t.is(((await pre.json()) as any).error.code, 'forbidden');
  // Not configured here: the Inspector's origin is as foreign as any other.
  t.is((await preflight(url, INSPECTOR, 'POST', MCP_REQUEST_HEADERS)).status, 403);

  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  const response = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, origin: 'https://evil.example', authorization: `Bearer ${token}` }, body: init });
  t.is(response.status, 403);
  t.is(response.headers.get('access-control-allow-origin'), null);
  // Non-browser clients send no Origin and are unaffected.
  t.is((await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body: init })).status, 200);
});

mcpTest('every public document, the JWKS and the console API’s resource metadata included, answers a preflight with 204 and is readable from any origin', async (t, server) => {
  const origin = 'https://claude.ai';
  const auth = server.config.authUrl;
  const api = new URL(server.config.apiUrl);
  const documents = [
    `${auth}/oauth/jwks`, `${auth}/.well-known/oauth-authorization-server`, `${auth}/.well-known/openid-configuration`,
    `${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/forge`, `${api.origin}/.well-known/oauth-protected-resource${api.pathname}/mcp`,
    `${server.mcpUrl}/`, `${server.mcpUrl}/forge/list_tools`, `${server.mcpUrl}/forge/client_config`,
  ];
  for (const url of documents) {
    const pre = await preflight(url, origin, 'GET', 'mcp-protocol-version');
    t.is(pre.status, 204, url);
    t.true(['*', origin].includes(pre.headers.get('access-control-allow-origin')!), url);
    t.true(listOf(pre.headers.get('access-control-allow-methods')).includes('get'), url);
    t.true(listOf(pre.headers.get('access-control-allow-headers')).includes('mcp-protocol-version'), url);
    const get = await fetch(url, { headers: { origin, 'mcp-protocol-version': '2025-11-25' } });
    t.is(get.status, 200, url);
    t.true(['*', origin].includes(get.headers.get('access-control-allow-origin')!), url);
  }
});

mcpTest('an error answer of an endpoint a browser may call carries the CORS headers of that endpoint’s other answers', async (t, server) => {
  const auth = server.config.authUrl;
  const api = new URL(server.config.apiUrl);
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const cases: Array<[method: string, url: string, status: number, init?: { headers?: Record<string, string>; body?: string }]> = [
    ['POST', `${auth}/oauth/jwks`, 405],
    ['DELETE', `${auth}/.well-known/oauth-authorization-server`, 405],
    ['DELETE', `${auth}/.well-known/openid-configuration`, 405],
    ['GET', `${auth}/oauth/token`, 405],
    ['GET', `${auth}/oauth/revoke`, 405],
    ['GET', `${auth}/oauth/introspect`, 405],
    ['POST', `${auth}/oauth/token`, 413, { headers: form, body: `code=${'x'.repeat(60 * 1024)}` }],
    ['POST', `${auth}/oauth/revoke`, 413, { headers: form, body: `token=${'x'.repeat(60 * 1024)}` }],
    ['POST', `${auth}/oauth/introspect`, 413, { headers: form, body: `token=${'x'.repeat(60 * 1024)}` }],
    ['POST', `${auth}/oauth/register`, 413, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'x'.repeat(20 * 1024) }) }],
    ['POST', `${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/forge`, 405],
    ['POST', `${api.origin}/.well-known/oauth-protected-resource${api.pathname}/mcp`, 405],
    ['POST', `${server.mcpUrl}/`, 405],
    ['POST', `${server.mcpUrl}/forge/list_tools`, 405],
    ['POST', `${server.mcpUrl}/forge/client_config`, 405],
    ['GET', `${server.mcpUrl}/forge/client_config?colour=blue`, 400],
    ['PUT', `${server.mcpUrl}/forge`, 405],
    // The body is read once the token is known: with one, too large a body; without, the challenge.
    ['POST', `${server.mcpUrl}/forge`, 413, { headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body: 'x'.repeat(server.config.bodyLimitBytes + 1) }],
    ['POST', `${server.mcpUrl}/forge`, 401, { headers: MCP_HEADERS, body: 'x'.repeat(server.config.bodyLimitBytes + 1) }],
  ];
  for (const [method, url, status, init = {}] of cases) {
    const response = await fetch(url, { method, headers: { origin: INSPECTOR, ...init.headers }, body: init.body });
    await response.arrayBuffer();
    const label = `${method} ${url.slice(0, 120)}`;
    t.is(response.status, status, label);
    t.true([INSPECTOR, '*'].includes(response.headers.get('access-control-allow-origin')!), `${label}: ${response.headers.get('access-control-allow-origin')}`);
  }
  // The authorization endpoint is a page, never read by a script: its refusals carry no CORS either.
  const page = await fetch(`${auth}/oauth/authorize`, { method: 'PUT', headers: { origin: INSPECTOR } });
  t.is(page.status, 405);
  t.is(page.headers.get('access-control-allow-origin'), null);
}, { env: { MCP_CORS_ORIGINS: INSPECTOR } });
