/**
 * The pages a person sees, in a real browser (Debian's chromium through playwright-core): the
 * authorization flow's sign-in and consent forms, the console's sign-in in two tabs, the audit
 * log's date filter, sign-out after the session ended, and a narrow (mobile) viewport.
 */
import test from 'ava';
import type { BrowserContext } from 'playwright-core';
import { databasesUnderTest } from '../helpers/db.js';
import { serverInBrowser, sharedBrowser, signInToConsole } from '../helpers/browser.js';
import { DEMO_PASSWORD, type McpTestServer } from '../helpers/mcp.js';
import { exchangeCode, pkce, registerClient } from '../helpers/oauth.js';
import { issueAccessToken } from '../helpers/grants.js';

const CALLBACK = 'http://127.0.0.1/callback';

const browserOf = sharedBrowser();

async function consoleSignIn(server: McpTestServer, context: BrowserContext, email: string) {
  const page = await context.newPage();
  await signInToConsole(page, server.url, email);
  return page;
}

for (const kind of databasesUnderTest()) {
  test(`a person signs in, chooses an organization and allows a client in a real browser [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind);
    // The client's redirect URI: the browser hands the code over here (nothing listens on port 80).
    const callbacks: URL[] = [];
    await context.route(`${CALLBACK}**`, (route) => {
      callbacks.push(new URL(route.request().url()));
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>client</title><p>done</p>' });
    });
    const client = await registerClient(server.url, { client_name: 'Browser Flow Assistant' });
    const pair = pkce();
    const resource = `${server.mcpUrl}/forge`;
    const params = new URLSearchParams({
      client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'forge.chat.read forge.chat.write', state: 'st-1',
      code_challenge: pair.challenge, code_challenge_method: 'S256', resource,
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/oauth/authorize?${params}`);
    await page.getByLabel('Email').fill('multi@example.com');
    await page.getByLabel('Password').fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState();
    // Browsers send `Origin: null` with these forms: the pages are served with Referrer-Policy: no-referrer.
    t.is(await page.getByRole('alert').count(), 0, `the sign-in form was refused: ${await page.locator('main').innerText()}`);
    await page.getByLabel('Organization', { exact: true }).selectOption({ label: 'Globex Industries (globex)' });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/^http:\/\/127\.0\.0\.1\/callback/).catch(() => undefined);
    t.is(callbacks.length, 1, `the consent did not return to the client: ${page.url()} ${await page.locator('body').innerText()}`);
    const code = callbacks[0]?.searchParams.get('code');
    t.truthy(code);
    t.is(callbacks[0]?.searchParams.get('state'), 'st-1');
    const tokens = await exchangeCode(server.url, { code: code!, clientId: client.client_id, redirectUri: CALLBACK, verifier: pair.verifier, resource });
    t.truthy(tokens.accessToken);
    const connection = await server.db('connections').where({ client_id: client.client_id }).first();
    t.is(connection?.tenant_id, server.tenants.globex.id);
  });

  test(`a second click on Allow while the first is answered sends nothing: the client gets its code [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind);
    // The browser's way back to the client, seen as it leaves (nothing listens on port 80; a
    // redirect that follows an intercepted answer is not routed, so it is watched, not fulfilled).
    const callbacks: URL[] = [];
    // The first answer is slow to come (a busy server): the page stays on screen, and the person clicks again.
    let consents = 0;
    await context.route('**/oauth/interaction/*/consent', async (route) => {
      consents += 1;
      const response = await route.fetch({ maxRedirects: 0 });
      await new Promise((resolve) => setTimeout(resolve, 600));
      await route.fulfill({ response });
    });
    const client = await registerClient(server.url, { client_name: 'Double Click Assistant' });
    const pair = pkce();
    const resource = `${server.mcpUrl}/forge`;
    const params = new URLSearchParams({
      client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'forge.chat.read', state: 'st-2',
      code_challenge: pair.challenge, code_challenge_method: 'S256', resource,
    });
    const page = await context.newPage();
    page.on('request', (request) => {
      if (request.url().startsWith(CALLBACK)) callbacks.push(new URL(request.url()));
    });
    await page.goto(`${server.url}/oauth/authorize?${params}`);
    await page.getByLabel('Email').fill('admin@acme.example');
    await page.getByLabel('Password').fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    // Two clicks 150 ms apart, from inside the page: Playwright's own click would wait for the first navigation.
    await page.evaluate(`(async () => {
      const allow = document.querySelector('button[value=allow]');
      allow.click();
      await new Promise((resolve) => setTimeout(resolve, 150));
      allow.click();
    })()`).catch(() => undefined); // the page may already be gone
    for (let waited = 0; !callbacks.length && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    t.is(consents, 1, 'the form was sent twice');
    t.is(callbacks.length, 1, `the client got no code: ${page.url()} ${await page.locator('body').innerText().catch(() => '')}`);
    t.truthy(callbacks[0]?.searchParams.get('code'));
    t.is((await server.db('connections').where({ client_id: client.client_id })).length, 1, 'one consent, one connection');
  });

  test(`a console sign-in page opened in a second tab does not break the first one [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind);
    const first = await context.newPage();
    await first.goto(`${server.url}/api/mcp/login`);
    const second = await context.newPage();
    await second.goto(`${server.url}/api/mcp/login`);
    await first.getByLabel('Email').fill('admin@acme.example');
    await first.getByLabel('Password').fill(DEMO_PASSWORD);
    await first.getByRole('button', { name: 'Sign in' }).click();
    await first.waitForLoadState();
    t.regex(first.url(), /\/api\/mcp\/connections$/, `the first tab's sign-in was refused: ${await first.locator('main').innerText()}`);
    // And the second tab's form still works too.
    await second.getByLabel('Email').fill('admin@acme.example');
    await second.getByLabel('Password').fill(DEMO_PASSWORD);
    await second.getByRole('button', { name: 'Sign in' }).click();
    await second.waitForLoadState();
    t.regex(second.url(), /\/api\/mcp\/connections$/, `the second tab's sign-in was refused: ${await second.locator('main').innerText()}`);
  });

  test(`the audit log's date filter includes the day chosen as To [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind);
    const page = await consoleSignIn(server, context, 'admin@acme.example'); // writes today's console.sign_in record
    await page.goto(`${server.url}/api/mcp/audit`);
    const all = await page.locator('tbody tr').count();
    t.true(all > 0);
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('From', { exact: true }).fill(today);
    await page.getByLabel('To', { exact: true }).fill(today);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/to=/);
    t.is(await page.locator('tbody tr').count(), all, 'From = To = today shows today\'s records');
    // The JSON API reads a calendar date the same way.
    const issued = await issueAccessToken(server.db, {
      tenantId: server.tenants.acme.id, userId: server.users['admin@acme.example'], product: 'console', resource: `${server.config.apiUrl}/mcp`, scopes: ['console.audit.read'],
    });
    const body = (await (await fetch(`${server.url}/api/mcp/v1/audit?from=${today}&to=${today}`, { headers: { authorization: `Bearer ${issued.token}` } })).json()) as { records: unknown[] };
    t.true(body.records.length > 0, 'the API\'s to=<today> includes today');
  });

  test(`signing out after the session ended lands on the sign-in page, not a 403 [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind);
    const page = await consoleSignIn(server, context, 'admin@acme.example');
    // The session ends on the server (expiry, or signing out in another tab) while this page stays open.
    await server.db('console_sessions').delete();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForLoadState();
    t.regex(page.url(), /\/api\/mcp\/login$/, await page.locator('main').innerText());
    t.is(await page.getByRole('button', { name: 'Sign in' }).count(), 1);
  });

  test(`the console fits a narrow (mobile) viewport: no sideways page scroll, every action reachable [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind, { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true });
    // A connection so that the tables have rows.
    const client = await registerClient(server.url, { client_name: 'Narrow Screen Assistant' });
    await issueAccessToken(server.db, {
      tenantId: server.tenants.acme.id, userId: server.users['admin@acme.example'], product: 'forge', resource: `${server.mcpUrl}/forge`,
      scopes: ['forge.chat.read', 'forge.chat.write'], clientId: client.client_id,
    });
    const page = await consoleSignIn(server, context, 'admin@acme.example');
    const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    for (const path of ['connections', 'audit', 'connect']) {
      await page.goto(`${server.url}/api/mcp/${path}`);
      t.is(await overflow(), 0, `/${path} scrolls sideways on a 360 px screen`);
      const signOut = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
      t.true(!!signOut && signOut.x >= 0 && signOut.x + signOut.width <= 360, `/${path}: Sign out is off screen`);
    }
  });
}
