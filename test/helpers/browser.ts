/** Debian's Chromium through playwright-core, as every browser test drives it (README: the browser tests). */
import test from 'ava';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { DbKind } from './db.js';
import { DEMO_PASSWORD, startMcpServer, type McpTestServer } from './mcp.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/** One browser for the test file: launched before its tests, closed after them. */
export function sharedBrowser(): () => Browser {
  let browser: Browser | undefined;
  test.before(async () => {
    browser = await launchChromium();
  });
  test.after.always(async () => browser?.close());
  return () => browser!;
}

/** Signs `email` in to the console of the server at `baseUrl` with the demo password, in `page`, and waits for the connections page. */
export async function signInToConsole(page: Page, baseUrl: string, email: string): Promise<void> {
  await page.goto(`${baseUrl}/api/mcp/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(DEMO_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/api\/mcp\/connections$/);
}

/**
 * A test server and a fresh context of `browser` (with `options`), both closed after the test, which
 * may take 180 s: a browser test is slow on a loaded machine.
 */
export async function serverInBrowser(
  t: { timeout(ms: number): void; teardown(fn: () => unknown): void }, browser: Browser, kind: DbKind, options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ server: McpTestServer; context: BrowserContext }> {
  t.timeout(180_000);
  const server = await startMcpServer(kind);
  t.teardown(() => server.close());
  const context = await browser.newContext(options);
  t.teardown(() => context.close());
  return { server, context };
}
