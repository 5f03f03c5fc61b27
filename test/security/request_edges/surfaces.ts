/**
 * Across the whole running product (default mounts): audience confusion between products and
 * between the console and a product (checklist E2, E3), protective headers on every HTML page
 * (G4, issue 8), and no secret of a real session in any log line (I8, BCP §4.9.3).
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { authorizeWithPassword, CookieJar, follow, parseForm, postForm, refresh, registerClient, startAuthorization } from '../../helpers/oauth.js';
import { DEMO_PASSWORD, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

mcpTest('audience: product tokens fail at other products and at the console API, console tokens fail at every product', async (t, server) => {
  const consoleResource = `${server.config.apiUrl}/mcp`;
  const forge = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const consoleToken = await grant(server, { product: 'console', resource: consoleResource, tenant: 'acme', scopes: ['console.connections.read', 'console.audit.read'] });
  const init = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } };
  for (const product of ['aegis', 'cavalier', 'harvest', 'people']) {
    t.is((await rawCall(server, forge.token, product, 'initialize', init)).status, 401, `forge token at ${product}`);
    t.is((await rawCall(server, consoleToken.token, product, 'initialize', init)).status, 401, `console token at ${product}`);
  }
  t.is((await rawCall(server, consoleToken.token, 'forge', 'initialize', init)).status, 401, 'console token at forge');
  const api = (token: string) => fetch(`${server.config.apiUrl}/mcp/v1/connections`, { headers: { authorization: `Bearer ${token}` } });
  const refused = await api(forge.token);
  t.is(refused.status, 401, 'a product token at the console API');
  t.regex(refused.headers.get('www-authenticate') ?? '', /resource_metadata=/);
  t.is((await api(consoleToken.token)).status, 200);
  // Near-miss audiences: trailing slash, case, another port, a path below.
  for (const resource of [`${server.mcpUrl}/forge/`, `${server.mcpUrl}/FORGE`, `${server.mcpUrl.replace('127.0.0.1', 'localhost')}/forge`, `${server.mcpUrl}/forge/x`]) {
    const nearMiss = await grant(server, { product: 'forge', resource, tenant: 'acme', scopes: ['forge.chat.read'] });
    t.is((await rawCall(server, nearMiss.token, 'forge', 'initialize', init)).status, 401, resource);
  }
});

mcpTest('every HTML page, including error pages, forbids framing and caching', async (t, server) => {
  const pages: Array<[string, Response]> = [];
  const record = (label: string, response: Response) => pages.push([label, response]);
  // Authorization server: error page, sign-in, consent, unknown interaction.
  const client = await registerClient(server.url, { redirect_uris: ['http://127.0.0.1/callback'] });
  record('authorize with an unknown client', (await startAuthorization(server.url, { clientId: 'dcr_nobody', resource: `${server.mcpUrl}/forge`, scopes: ['forge.chat.read'] })).response);
  const auth = await startAuthorization(server.url, { clientId: client.client_id, resource: `${server.mcpUrl}/forge`, scopes: ['forge.chat.read'] });
  const login = await follow(server.url, auth.jar, auth.response);
  record('sign-in page', login.response);
  const form = parseForm(login.html!);
  const badPassword = await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf], ['email', 'admin@acme.example'], ['password', 'wrong']]);
  record('sign-in page with an error', badPassword);
  const page = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, form.action, [['csrf', parseForm(await badPassword.clone().text()).csrf], ['email', 'admin@acme.example'], ['password', DEMO_PASSWORD]]));
  record('consent page', page.response);
  record('unknown interaction', await new CookieJar().fetch(`${server.url}/oauth/interaction/nope`));
  record('csrf failure', await postForm(server.url, auth.jar, parseForm(page.html!).action, [['csrf', 'bad']]));

  // Console: sign in and walk every same-origin link from the connections page.
  const jar = new CookieJar();
  const consoleBase = `${server.config.apiUrl}/mcp`;
  const loginPage = await jar.fetch(`${consoleBase}/login`);
  const loginHtml = await loginPage.clone().text();
  record('console sign-in', loginPage);
  const csrf = /name="csrf" value="([^"]+)"/.exec(loginHtml)![1];
  await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const signedIn = await postForm(server.url, jar, `${consoleBase}/login`, [['csrf', csrf], ['email', 'admin@acme.example'], ['password', DEMO_PASSWORD]]);
  t.true(signedIn.status < 400, `console sign-in: ${signedIn.status}`);
  const queue = [`${consoleBase}/connections`, `${consoleBase}/audit`, `${consoleBase}/connections/00000000-0000-4000-8000-000000000000`, `${consoleBase}/nope`];
  const seen = new Set<string>();
  while (queue.length && seen.size < 25) {
    const url = queue.shift()!;
    if (seen.has(url)) continue;
    seen.add(url);
    const response = await jar.fetch(url);
    const html = await response.clone().text();
    record(`console ${new URL(url).pathname}`, response);
    for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
      const next = new URL(href.replace(/&amp;/g, '&'), url);
      if (next.origin === new URL(server.url).origin && next.pathname.startsWith(new URL(consoleBase).pathname) && !next.pathname.includes('/export') && !next.pathname.endsWith('/logout')) queue.push(next.href);
    }
  }
  let html = 0;
  for (const [label, response] of pages) {
    if (!(response.headers.get('content-type') ?? '').includes('text/html')) continue;
    html += 1;
    t.regex(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, label);
    t.is(response.headers.get('x-frame-options'), 'DENY', label);
    t.regex(response.headers.get('cache-control') ?? '', /no-store/, label);
  }
  t.true(html >= 12, `${html} HTML pages checked`);
  t.log(`${html} HTML pages checked`);
});

mcpTest('no token, code, verifier, password, cookie or session id of a real session appears in any log line', async (t, server) => {
  const secrets: Array<[string, string]> = [['password', DEMO_PASSWORD]];
  const client = await registerClient(server.url, { redirect_uris: ['http://127.0.0.1/callback'] });
  if (client.registration_access_token) secrets.push(['registration access token', client.registration_access_token]);
  const tokens = await authorizeWithPassword(server.url, {
    email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource: `${server.mcpUrl}/forge`, scopes: ['forge.chat.read', 'forge.chat.write'], clientId: client.client_id,
  });
  secrets.push(['access token', tokens.accessToken], ['refresh token', tokens.refreshToken!]);
  const rotated = await refresh(server.url, { refreshToken: tokens.refreshToken!, clientId: client.client_id });
  secrets.push(['rotated access token', rotated.accessToken], ['rotated refresh token', rotated.refreshToken!]);
  // A code and its verifier, and the interaction cookies, from a second authorization left unfinished.
  const auth = await startAuthorization(server.url, { clientId: client.client_id, resource: `${server.mcpUrl}/forge`, scopes: ['forge.chat.read'] });
  secrets.push(['code verifier', auth.verifier]);
  for (const cookie of auth.response.headers.getSetCookie()) secrets.push(['cookie', cookie.split(';')[0].split('=').slice(1).join('=')]);
  const sessionId = await openSession(server, rotated.accessToken, 'forge');
  secrets.push(['session id', sessionId]);
  await rawCall(server, rotated.accessToken, 'forge', 'tools/call', { name: 'forge.create_conversation', arguments: { title: 'logged?', api_key: 'sk-live-0123456789abcdef' } }, { sessionId });
  await rawCall(server, rotated.accessToken, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { sessionId });
  await rawCall(server, 'not-a-real-token-0123456789', 'forge', 'tools/list', {}, { sessionId });
  await fetch(`${server.url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: rotated.refreshToken!, client_id: client.client_id }) });
  await rawCall(server, rotated.accessToken, 'forge', 'tools/list', {}, { sessionId });
  t.true(server.logs.length > 10, `${server.logs.length} log lines`);
  for (const line of server.logs) {
    for (const [label, secret] of secrets) if (secret && secret.length >= 8) t.false(line.includes(secret), `a log line contains the ${label}: ${line.slice(0, 200)}`);
    t.notRegex(line, /Bearer\s+[A-Za-z0-9\-._~+/]{16,}/, line.slice(0, 200));
    t.false(line.includes('sk-live-0123456789abcdef'), 'a secret-looking argument');
  }
}, { env: { LOG_LEVEL: 'debug' } });
