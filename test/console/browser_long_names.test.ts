/**
 * A client's name is its own text (up to 200 characters, docs/auth.md). On a 320 px screen (or a
 * desktop zoomed to 400 %; WCAG 2.1 1.4.10 Reflow) the pages that show it must still fit: no
 * sideways scrolling of the page, and the words around it (the badges, a name with spaces) are
 * broken between words, not inside them. In a real browser (Debian's chromium through playwright-core).
 */
import test from 'ava';
import type { Page } from 'playwright-core';
import { databasesUnderTest } from '../helpers/db.js';
import { serverInBrowser, sharedBrowser, signInToConsole } from '../helpers/browser.js';
import { DEMO_PASSWORD } from '../helpers/mcp.js';
import { pkce, registerClient } from '../helpers/oauth.js';

const CALLBACK = 'http://127.0.0.1/callback';
const LONG_NAME = 'Assistant'.repeat(22).slice(0, 200); // one word of 200 characters: no place to wrap

const browserOf = sharedBrowser();

const overflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

/** Words (runs without spaces) of the elements matching `selector` that the browser split over two lines. */
const brokenWords = (page: Page, selector: string) => page.evaluate<string[]>(`(() => {
  const broken = [];
  for (const element of document.querySelectorAll(${JSON.stringify(selector)})) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        if (match[0].length > 20) continue; // a long run may be broken: that is how it fits
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
})()`);

for (const kind of databasesUnderTest()) {
  test(`a 200-character client name fits the sign-in, consent and console pages of a 320 px screen [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind, { viewport: { width: 320, height: 640 } });
    await context.route(`${CALLBACK}**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>client</title><p>done</p>' }));

    const client = await registerClient(server.url, { client_name: LONG_NAME });
    const spaced = await registerClient(server.url, { client_name: 'Rechnungsprüfungsassistent für Buchhaltung 2024' });
    const page = await context.newPage();
    const authorize = (clientId: string) => page.goto(`${server.url}/oauth/authorize?${new URLSearchParams({
      client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'forge.chat.read', state: 's',
      code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: `${server.mcpUrl}/forge`,
    })}`);

    await authorize(client.client_id);
    t.is(await overflow(page), 0, 'the sign-in page scrolls sideways');
    await page.getByLabel('Email').fill('admin@acme.example');
    await page.getByLabel('Password').fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    t.is(await overflow(page), 0, 'the consent page scrolls sideways');
    t.deepEqual(await brokenWords(page, '.client dd'), [], 'words of the client summary are split in the middle');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/^http:\/\/127\.0\.0\.1\/callback/);

    await authorize(spaced.client_id); // signed in already: straight to consent
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    t.deepEqual(await brokenWords(page, '.client dd'), [], 'words of a name with spaces are split in the middle');

    const connection = await server.db('connections').where({ client_id: client.client_id }).first();
    await signInToConsole(page, server.url, 'admin@acme.example');
    for (const path of [`connections/${connection.id}`, `connections/${connection.id}/revoke`]) {
      await page.goto(`${server.url}/api/mcp/${path}`);
      t.is(await overflow(page), 0, `/${path} scrolls sideways`);
    }
  });
}
