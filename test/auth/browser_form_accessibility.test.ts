/**
 * The sign-in forms for people who use a screen reader or the keyboard, in a real browser (Debian's
 * chromium through playwright-core):
 * - a refused sign-in marks the fields it is about and ties the message to them (WCAG 2.1 3.3.1,
 *   1.3.1: `aria-invalid`, `aria-describedby` naming the announced message), on the authorization
 *   server's page and the console's;
 * - the focus outline of the authorization pages' fields and buttons stands out from the card
 *   behind it by at least 3:1 (WCAG 2.1 1.4.11 non-text contrast, 2.4.7 focus visible).
 */
import test from 'ava';
import type { Page } from 'playwright-core';
import { databasesUnderTest } from '../helpers/db.js';
import { serverInBrowser, sharedBrowser } from '../helpers/browser.js';
import { pkce, registerClient } from '../helpers/oauth.js';

const CALLBACK = 'http://127.0.0.1/callback';

const browserOf = sharedBrowser();

/** For each field: aria-invalid, and the text of the elements its aria-describedby names. */
const fieldErrors = (page: Page) => page.evaluate<Array<{ id: string; invalid: string | null; described: string }>>(`[...document.querySelectorAll('#email, #password')].map((field) => ({
  id: field.id,
  invalid: field.getAttribute('aria-invalid'),
  described: (field.getAttribute('aria-describedby') ?? '').split(/\\s+/).filter(Boolean).map((id) => document.getElementById(id)?.textContent ?? '').join(' '),
}))`);

/** Contrast ratio (WCAG 2.1) of the focused element's outline against the background of its card. */
const focusContrast = (page: Page) => page.evaluate<{ element: string; style: string; ratio: number }>(`(() => {
  const element = document.activeElement;
  const style = getComputedStyle(element);
  const rgb = (value) => value.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const luminance = ([r, g, b]) => [r, g, b].map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)).reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const outline = luminance(rgb(style.outlineColor));
  const card = luminance(rgb(getComputedStyle(element.closest('main')).backgroundColor));
  const [light, dark] = [outline, card].sort((a, b) => b - a);
  return { element: element.tagName + (element.id ? '#' + element.id : ''), style: style.outlineStyle + ' ' + style.outlineColor, ratio: (light + 0.05) / (dark + 0.05) };
})()`);

for (const kind of databasesUnderTest()) {
  test(`a refused sign-in ties its message to the fields, and the focus outline is visible, on the authorization and console pages [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind);
    const page = await context.newPage();
    const client = await registerClient(server.url, { client_name: 'Screen Reader Assistant', redirect_uris: [CALLBACK] });
    await page.goto(`${server.url}/oauth/authorize?${new URLSearchParams({
      client_id: client.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'forge.chat.read', state: 's',
      code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: `${server.mcpUrl}/forge`,
    })}`);

    // Keyboard only: the email field has the focus; every stop on the way to the button shows it.
    for (const stop of ['INPUT#email', 'INPUT#password', 'BUTTON']) {
      const focus = await focusContrast(page);
      t.is(focus.element, stop);
      t.true(focus.ratio >= 3, `${stop}: focus outline ${focus.style} has a contrast of ${focus.ratio.toFixed(2)}:1 against the card`);
      if (stop === 'INPUT#email') await page.keyboard.type('admin@acme.example');
      if (stop === 'INPUT#password') await page.keyboard.type('not the password');
      await page.keyboard.press('Tab');
    }
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    for (const field of await fieldErrors(page)) {
      t.is(field.invalid, 'true', `authorization sign-in: #${field.id} is not marked invalid`);
      t.regex(field.described, /do not match/, `authorization sign-in: #${field.id} is not described by the message`);
    }

    await page.goto(`${server.url}/api/mcp/login`);
    await page.getByLabel('Email').fill('admin@acme.example');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    for (const field of await fieldErrors(page)) {
      t.is(field.invalid, 'true', `console sign-in: #${field.id} is not marked invalid`);
      t.regex(field.described, /do not match/, `console sign-in: #${field.id} is not described by the message`);
    }
  });
}
