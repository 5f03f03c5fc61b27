/**
 * The console's "Connect a client" page: the same JSON as `npm run client-config`, usable without
 * JavaScript (a <pre> and a GET form), and copy buttons that work in a real browser under the
 * page's Content-Security-Policy (the one inline script is allowed by its hash, nothing else).
 */
import { createHash } from 'node:crypto';
import test from 'ava';
import { launchChromium, signInToConsole } from '../helpers/browser.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { buildCatalog } from '../../shared/catalog.js';
import { buildClientConfig } from '../../shared/client_config.js';
import { databasesUnderTest } from '../helpers/db.js';
import { DEMO_PASSWORD, mcpTest, startMcpServer, type McpTestServer } from '../helpers/mcp.js';
import { CookieJar, parseForm, postForm } from '../helpers/oauth.js';


async function signIn(server: McpTestServer): Promise<CookieJar> {
  const jar = new CookieJar();
  const login = await jar.fetch(`${server.url}/api/mcp/login`);
  const form = parseForm(await login.text());
  const signedIn = await postForm(server.url, jar, form.action, [['csrf', form.csrf], ['email', 'member@acme.example'], ['password', DEMO_PASSWORD]]);
  if (signedIn.status !== 302) throw new Error(`sign-in failed: ${signedIn.status}`);
  return jar;
}

function unescape(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

function preOf(page: string, id: string): unknown {
  const match = new RegExp(`<pre id="${id}"[^>]*>([\\s\\S]*?)</pre>`).exec(page);
  if (!match) throw new Error(`no <pre id="${id}">`);
  return JSON.parse(unescape(match[1]));
}

mcpTest('the Connect a client page shows the client-config JSON in <pre> blocks, and its CSP allows exactly its one script', async (t, server) => {
  const jar = await signIn(server);
  const response = await jar.fetch(`${server.url}/api/mcp/connect`);
  t.is(response.status, 200);
  const page = await response.text();
  const catalog = buildCatalog(PRODUCTS);
  const urls = { authUrl: server.config.authUrl, mcpUrl: server.config.mcpUrl };
  t.deepEqual(preOf(page, 'config-all'), buildClientConfig(catalog, urls, {}));
  t.deepEqual(preOf(page, 'config-aegis'), buildClientConfig(catalog, urls, { products: ['aegis'] }));
  t.regex(page, /<a href="\/api\/mcp\/connect" aria-current="page">Connect a client<\/a>/);
  t.regex(page, /aegis\.findings\.read<\/code><\/td><td>See the findings of posture scans/);
  t.notRegex(page, /config-midas/, 'midas is on the roadmap');

  const scripts = [...page.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
  t.is(scripts.length, 1);
  const csp = response.headers.get('content-security-policy') ?? '';
  t.true(csp.includes(`script-src 'sha256-${createHash('sha256').update(scripts[0]).digest('base64')}'`), csp);
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe-inline'[^;]*script|script-src[^;]*unsafe/);
  t.regex(page, /<button type="button" class="secondary" data-copy="config-all" hidden>Copy<\/button>/, 'copy buttons stay hidden without JavaScript');

  // The form works without JavaScript: a GET with the chosen servers and read-only.
  const chosen = await (await jar.fetch(`${server.url}/api/mcp/connect?product=aegis&product=forge&read_only=1`)).text();
  t.deepEqual(preOf(chosen, 'config-all'), buildClientConfig(catalog, urls, { products: ['forge', 'aegis'], readOnly: true }));
  t.regex(chosen, /name="read_only" value="1" style="width:auto" checked/);
  // The values GET {mcp_url}/{product}/client_config takes: read_only=true is read-only here too, not every scope.
  const typed = await (await jar.fetch(`${server.url}/api/mcp/connect?product=aegis&read_only=true`)).text();
  t.deepEqual(preOf(typed, 'config-all'), buildClientConfig(catalog, urls, { products: ['aegis'], readOnly: true }));

  const unknown = await jar.fetch(`${server.url}/api/mcp/connect?product=nosuch`);
  t.is(unknown.status, 404);
  t.regex(await unknown.text(), /no product named nosuch/);

  const anonymous = await fetch(`${server.url}/api/mcp/connect`, { redirect: 'manual' });
  t.is(anonymous.status, 302);
  t.is(anonymous.headers.get('location'), '/api/mcp/login?next=%2Fapi%2Fmcp%2Fconnect', 'to sign in, and back here after');
});

for (const kind of databasesUnderTest()) {
  test(`the copy buttons work in a real browser under the page's CSP [${kind}]`, async (t) => {
    t.timeout(180_000);
    const server = await startMcpServer(kind);
    t.teardown(() => server.close()); // also when the browser cannot start: a server left open keeps the worker alive
    const browser = await launchChromium();
    t.teardown(() => browser.close());
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    await signInToConsole(page, server.url, 'member@acme.example');
    await page.getByRole('link', { name: 'Connect a client' }).click();
    await page.waitForURL(/\/api\/mcp\/connect$/);

    const copy = page.locator('button[data-copy="config-aegis"]');
    await copy.waitFor({ state: 'visible' });
    await copy.click();
    // Expressions evaluated in the page (as strings: this file is compiled without the DOM library).
    await page.waitForFunction(`document.querySelector('button[data-copy="config-aegis"]')?.textContent === 'Copied'`);
    const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
    t.deepEqual(JSON.parse(copied), buildClientConfig(buildCatalog(PRODUCTS), { authUrl: server.config.authUrl, mcpUrl: server.config.mcpUrl }, { products: ['aegis'] }));
    t.deepEqual(violations, []);
  });
}
