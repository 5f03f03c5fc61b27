/**
 * The redirect URIs the clients people use register (DESIGN.md §4): loopback with a port chosen at
 * run time (VS Code, Claude Code, the Inspector), a custom scheme (Cursor) and hosted https
 * callbacks (claude.ai, cursor.com, vscode.dev). Each is accepted by dynamic registration, whose
 * answer carries registration_client_uri, and the authorization response goes to exactly that URI
 * with code, state and iss (RFC 9207), and the code redeems there.
 */
import type { ExecutionContext } from 'ava';
import { DEMO_PASSWORD, mcpTest, openSession, type McpTestServer } from '../helpers/mcp.js';
import { authorizeCode, exchangeCode, follow, registerClient, startAuthorization } from '../helpers/oauth.js';

interface CallbackStyle {
  client: string;
  /** What the client registers. */
  registered: string[];
  /** What it sends as redirect_uri (a loopback client picks its port when it starts). */
  used: string;
  /** URIs that must not receive a code for this client. */
  refused: string[];
}

const STYLES: CallbackStyle[] = [
  {
    // What VS Code registers; it redirects to its default port 33418 or, when that is busy, to any free one.
    client: 'Visual Studio Code', registered: ['http://127.0.0.1:33418/', 'https://insiders.vscode.dev/redirect', 'https://vscode.dev/redirect', 'http://127.0.0.1/'], used: 'http://127.0.0.1:50123/',
    refused: ['http://127.0.0.1:50123/other', 'http://evil.example:33418/', 'https://vscode.dev/redirect/x'],
  },
  {
    client: 'Claude Code', registered: ['http://localhost:54545/callback'], used: 'http://localhost:61027/callback',
    refused: ['http://localhost:61027/callback/', 'http://localhost.evil.example:61027/callback', 'https://localhost:61027/callback'],
  },
  {
    client: 'MCP Inspector', registered: ['http://localhost:6274/oauth/callback', 'http://localhost:6274/oauth/callback/debug'], used: 'http://localhost:6274/oauth/callback/debug',
    refused: ['http://localhost:6274/oauth', 'http://127.0.0.2:6274/oauth/callback'],
  },
  {
    client: 'Cursor', registered: ['cursor://anysphere.cursor-mcp/oauth/callback'], used: 'cursor://anysphere.cursor-mcp/oauth/callback',
    refused: ['cursor://anysphere.cursor-mcp/oauth/other', 'cursor://evil/oauth/callback', 'vscode://anysphere.cursor-mcp/oauth/callback'],
  },
  {
    client: 'Claude (claude.ai)', registered: ['https://claude.ai/api/mcp/auth_callback'], used: 'https://claude.ai/api/mcp/auth_callback',
    refused: ['https://claude.ai/api/mcp/auth_callback/x', 'https://claude.ai.evil.example/api/mcp/auth_callback', 'http://claude.ai/api/mcp/auth_callback'],
  },
  {
    client: 'Cursor (cursor.com)', registered: ['https://cursor.com/api/mcp/oauth/callback'], used: 'https://cursor.com/api/mcp/oauth/callback',
    refused: ['https://www.cursor.com/api/mcp/oauth/callback', 'https://cursor.com:8443/api/mcp/oauth/callback'],
  },
];

for (const style of STYLES) {
  mcpTest(`${style.client}: registration with ${style.registered[0]} is accepted and the code goes to exactly ${style.used}`, async (t, server) => {
    const base = server.config.authUrl;
    const registered = await registerClient(base, { client_name: style.client, redirect_uris: style.registered });
    t.truthy(registered.client_id);
    t.is(registered.registration_client_uri, `${base}/oauth/register/${registered.client_id}`);
    t.truthy(registered.registration_access_token);
    t.is(registered.token_endpoint_auth_method, 'none');

    // RFC 7592 read: the registration_client_uri with the registration access token returns the client.
    const read = await fetch(registered.registration_client_uri!, { headers: { authorization: `Bearer ${registered.registration_access_token}` } });
    t.is(read.status, 200);
    const readBody = (await read.json()) as any;
    t.is(readBody.client_id, registered.client_id);
    t.is(readBody.client_name, style.client);
    t.is((await fetch(registered.registration_client_uri!)).status, 401, 'not without the registration access token');

    const resource = `${server.mcpUrl}/forge`;
    const { code, redirect, verifier, clientId } = await authorizeCode(base, {
      email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes: ['forge.chat.read'], clientId: registered.client_id, redirectUri: style.used,
    });
    t.is(redirect.href.split('?')[0], style.used, 'exactly the URI the client sent, port included');
    t.deepEqual([...redirect.searchParams.keys()].sort(), ['code', 'iss', 'state']);
    t.is(redirect.searchParams.get('iss'), base, 'RFC 9207 issuer identification');
    t.truthy(code);

    const tokens = await exchangeCode(base, { code, clientId, redirectUri: style.used, verifier, resource });
    t.is(tokens.scope, 'forge.chat.read');
    t.truthy(await openSession(server as McpTestServer, tokens.accessToken, 'forge'), 'the token works at the product it was issued for');

    for (const other of style.refused) await assertNoRedirect(t, server, registered.client_id, other);
  });
}

mcpTest('registration refuses redirect URIs no real client needs: plain http off loopback, dangerous schemes, fragments', async (t, server) => {
  const cases = ['http://claude.ai/api/mcp/auth_callback', 'javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', 'https://claude.ai/cb#frag', 'https://user:pw@claude.ai/cb'];
  for (const uri of cases) {
    const response = await fetch(`${server.config.authUrl}/oauth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'x', redirect_uris: [uri], token_endpoint_auth_method: 'none' }),
    });
    t.is(response.status, 400, uri);
    t.is(((await response.json()) as any).error, 'invalid_redirect_uri', uri);
  }
});

/** An authorization request with a redirect URI the client did not register: an error page, never a redirect to it. */
async function assertNoRedirect(t: ExecutionContext, server: McpTestServer, clientId: string, redirectUri: string): Promise<void> {
  const auth = await startAuthorization(server.config.authUrl, { clientId, redirectUri, resource: `${server.mcpUrl}/forge`, scopes: ['forge.chat.read'] });
  const page = await follow(server.config.authUrl, auth.jar, auth.response);
  t.not(page.response.status, 302, `${redirectUri} must not be redirected to`);
  t.false(page.url.startsWith(redirectUri), redirectUri);
  t.regex(page.html ?? '', /redirect_uri/, `${redirectUri}: the error page names the problem`);
}
