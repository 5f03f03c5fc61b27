/**
 * How a person answers the sign-in and consent pages from the keyboard, in a real browser
 * (Debian's chromium through playwright-core):
 * - the sign-in page's Cancel comes after Sign in in the focus order and answers the application
 *   `access_denied`; Enter in a field still signs in (Cancel is not the form's default button);
 * - in the consent form, Enter on a permission's checkbox is an implicit submission (HTML
 *   "implicit submission": Chromium sends it through the form's first submit button, which was
 *   Deny). It neither allows nor denies: the page comes back asking for a choice, with the
 *   choices kept. Enter on the organization list sends nothing.
 */
import test from 'ava';
import type { BrowserContext, Page } from 'playwright-core';
import { databasesUnderTest, type DbKind } from '../helpers/db.js';
import { serverInBrowser, sharedBrowser } from '../helpers/browser.js';
import { DEMO_PASSWORD, type McpTestServer } from '../helpers/mcp.js';
import { pkce, registerClient } from '../helpers/oauth.js';
import { until } from '../helpers/poll.js';

const CALLBACK = 'http://127.0.0.1/callback';

const browserOf = sharedBrowser();

interface Flow {
  server: McpTestServer;
  context: BrowserContext;
  page: Page;
  clientId: string;
  /** Every request the browser sent to the client's redirect URI. */
  callbacks: URL[];
  /** Every form the browser posted to the authorization server. */
  posts: string[];
}

/** Opens the authorization request of a new self-registered client in a fresh browser context. */
async function startFlow(t: { timeout(ms: number): void; teardown(fn: () => unknown): void }, kind: DbKind, scope: string): Promise<Flow> {
  const { server, context } = await serverInBrowser(t, browserOf(), kind);
  const callbacks: URL[] = [];
  await context.route(`${CALLBACK}**`, (route) => {
    callbacks.push(new URL(route.request().url()));
    return route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>client</title><p>done</p>' });
  });
  const { client_id: clientId } = await registerClient(server.url, { client_name: 'Keyboard Assistant', redirect_uris: [CALLBACK] });
  const page = await context.newPage();
  const posts: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().startsWith(server.url)) posts.push(new URL(request.url()).pathname);
  });
  await page.goto(`${server.url}/oauth/authorize?${new URLSearchParams({
    client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope, state: 'st-keys',
    code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: `${server.mcpUrl}/forge`,
  })}`);
  return { server, context, page, clientId, callbacks, posts };
}

/** The focused element: its tag and its accessible text or id. */
const focused = (page: Page) => page.evaluate<string>(`(() => { const e = document.activeElement; return e.tagName + ':' + (e.id || e.textContent.trim()); })()`);

for (const kind of databasesUnderTest()) {
  test(`the sign-in page's Cancel follows Sign in in the focus order and answers the application access_denied; Enter in a field signs in [${kind}]`, async (t) => {
    const { server, page, clientId, callbacks } = await startFlow(t, kind, 'forge.chat.read');
    // Enter in the password field submits the sign-in (the refused password shows the alert), not Cancel.
    await page.getByLabel('Email').fill('admin@acme.example');
    await page.getByLabel('Password').fill('not the password');
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('alert').waitFor();
    t.regex(await page.getByRole('alert').innerText(), /do not match/);
    t.is(callbacks.length, 0, 'Enter in a field cancelled the request');

    await page.getByLabel('Password').focus();
    const stops: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      await page.keyboard.press('Tab');
      stops.push(await focused(page));
    }
    t.deepEqual(stops, ['BUTTON:Sign in', 'BUTTON:Cancel']);
    await page.keyboard.press('Space');
    const back = await until(10_000, async () => callbacks[0]);
    t.truthy(back, `the application got no answer: ${page.url()} ${await page.locator('body').innerText().catch(() => '')}`);
    t.is(back?.searchParams.get('error'), 'access_denied');
    t.is(back?.searchParams.get('state'), 'st-keys');
    t.is((await server.db('connections').where({ client_id: clientId })).length, 0, 'nothing was connected');
  });

  test(`Enter in the consent form neither allows nor denies: the page asks for a choice and keeps the one made [${kind}]`, async (t) => {
    const { server, page, clientId, callbacks, posts } = await startFlow(t, kind, 'forge.chat.read forge.chat.write');
    await page.getByLabel('Email').fill('admin@acme.example');
    await page.getByLabel('Password').fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const consentPosts = () => posts.filter((path) => path.endsWith('/consent')).length;
    t.deepEqual(await page.getByRole('button').allInnerTexts(), ['Deny', 'Allow'], 'the page shows its two answers, and nothing else to press');

    // Enter on the organization list sends nothing.
    await page.getByLabel('Organization', { exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.waitForTimeout(300); // nothing to wait for: a submission would have been sent by now
    t.is(consentPosts(), 0, 'Enter on the organization list sent the form');

    // The person unticks the second permission with Space, then presses Enter on it.
    const write = page.getByRole('checkbox').nth(1);
    await write.focus();
    await page.keyboard.press('Space');
    t.false(await write.isChecked());
    await page.keyboard.press('Enter');
    // Whatever the answer: the page back with its message, or the application's redirect URI.
    await until(10_000, async () => callbacks[0] ?? ((await page.getByRole('alert').count().catch(() => 0)) || undefined));
    t.is(callbacks.length, 0, `Enter answered the application: ${callbacks[0]}`);
    t.is(consentPosts(), 1, 'Enter sent the form once');
    t.regex(await page.getByRole('alert').innerText(), /Choose Allow or Deny/);
    t.is((await server.db('audit_log').whereIn('name', ['consent.deny', 'consent.grant'])).length, 0, 'Enter was recorded as a decision');
    t.true(await page.getByRole('checkbox').nth(0).isChecked(), 'the ticked permission is kept');
    t.false(await page.getByRole('checkbox').nth(1).isChecked(), 'the unticked permission is kept');

    // The deliberate choice still works on the page that came back.
    await page.getByRole('button', { name: 'Allow' }).click();
    const back = await until(10_000, async () => callbacks[0]);
    t.truthy(back?.searchParams.get('code'), `the application got no code: ${back}`);
    const connection = await server.db('connections').where({ client_id: clientId }).first();
    t.is(connection?.scopes, 'forge.chat.read', 'the connection holds the permission left ticked');
  });
}
