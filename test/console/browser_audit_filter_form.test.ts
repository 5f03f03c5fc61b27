/**
 * The audit log's filter form in a real browser (Debian's chromium through playwright-core). What
 * the address filters by is what the form shows and sends again: a `kind` (a field of its own),
 * the page size (`limit`) and a time that a date field cannot hold (a browser empties a date field
 * given `2026-11-20T12:00Z`), so adding a filter never silently drops one and widens the listing.
 * And From set to the day after To is a reversed range, refused as such, not an empty page.
 */
import test from 'ava';
import type { Page } from 'playwright-core';
import { appendAudit } from '../../db/audit.js';
import { databasesUnderTest } from '../helpers/db.js';
import { serverInBrowser, sharedBrowser, signInToConsole } from '../helpers/browser.js';
import { startMcpServer, type McpTestServer } from '../helpers/mcp.js';
import { issueAccessToken } from '../helpers/grants.js';

const browserOf = sharedBrowser();
const HOUR = 3600_000;
const START = Date.UTC(2026, 10, 20, 10);

async function signedIn(t: { timeout(ms: number): void; teardown(fn: () => unknown): void }, kind: Parameters<typeof startMcpServer>[0]): Promise<{ server: McpTestServer; page: Page }> {
  const { server, context } = await serverInBrowser(t, browserOf(), kind);
  const page = await context.newPage();
  await signInToConsole(page, server.url, 'admin@acme.example');
  return { server, page };
}

/** The names of the filter.* records the page lists, newest first. */
const listed = async (page: Page) => (await page.locator('main tbody td code').allInnerTexts()).filter((name) => name.startsWith('filter.'));

for (const kind of databasesUnderTest()) {
  test(`the audit filter form shows and keeps the kind, the page size and a time from the address [${kind}]`, async (t) => {
    const { server, page } = await signedIn(t, kind);
    const acme = server.tenants.acme.id;
    // An admin record and a tool record of forge each hour, 10:00-14:00 UTC.
    for (let hour = 0; hour < 5; hour += 1) {
      await appendAudit(server.db, { tenantId: acme, kind: 'admin', product: 'forge', name: `filter.admin_${hour}`, outcome: 'ok', time: START + hour * HOUR });
      await appendAudit(server.db, { tenantId: acme, kind: 'tool', product: 'forge', name: `filter.tool_${hour}`, outcome: 'ok', time: START + hour * HOUR + 1 });
    }
    await page.goto(`${server.url}/api/mcp/audit?kind=admin&from=2026-11-20T12:00Z&to=2026-11-20&limit=2`);
    t.deepEqual(await listed(page), ['filter.admin_4', 'filter.admin_3']);
    t.is(await page.getByLabel('Kind').inputValue(), 'admin', 'the kind filtered by is shown');
    t.is(await page.getByLabel('From', { exact: true }).inputValue(), '2026-11-20T12:00Z', 'the From field is empty while the listing starts at 12:00');

    await page.getByLabel('Product').fill('forge');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/product=forge/);
    const sent = new URL(page.url()).searchParams;
    t.like(Object.fromEntries(sent), { product: 'forge', kind: 'admin', from: '2026-11-20T12:00Z', to: '2026-11-20', limit: '2' }, `a filter was dropped: ${page.url()}`);
    t.deepEqual(await listed(page), ['filter.admin_4', 'filter.admin_3'], 'adding a filter widened the listing');

    // The kind is chosen in the form too, and "any" removes it.
    await page.getByLabel('Kind').selectOption('tool');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/kind=tool/);
    t.deepEqual(await listed(page), ['filter.tool_4', 'filter.tool_3']);
    await page.getByLabel('Kind').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('kind') === '');
    t.deepEqual(await listed(page), ['filter.tool_4', 'filter.admin_4']);

    // A calendar date stays in a date field.
    await page.goto(`${server.url}/api/mcp/audit?from=2026-11-20`);
    t.is(await page.getByLabel('From', { exact: true }).getAttribute('type'), 'date');
    t.is(await page.getByLabel('From', { exact: true }).inputValue(), '2026-11-20');
  });

  test(`From set to the day after To is a reversed range, refused on the page and by the API, not an empty listing [${kind}]`, async (t) => {
    const { server, page } = await signedIn(t, kind);
    await page.goto(`${server.url}/api/mcp/audit`);
    await page.getByLabel('From', { exact: true }).fill('2026-11-21');
    await page.getByLabel('To', { exact: true }).fill('2026-11-20');
    const answer = page.waitForResponse((response) => response.url().includes('to=2026-11-20'));
    await page.getByRole('button', { name: 'Filter' }).click();
    t.is((await answer).status(), 400);
    const main = await page.locator('main').innerText();
    t.regex(main, /later than to/, main);
    t.regex(main, /invalid_request/);

    const { token } = await issueAccessToken(server.db, {
      tenantId: server.tenants.acme.id, userId: server.users['admin@acme.example'], product: 'console', resource: `${server.config.apiUrl}/mcp`, scopes: ['console.audit.read'],
    });
    const api = (query: string) => fetch(`${server.url}/api/mcp/v1/audit?${query}`, { headers: { authorization: `Bearer ${token}` } });
    for (const query of ['from=2026-11-21&to=2026-11-20', 'from=2026-11-21T00:00Z&to=2026-11-20']) {
      const response = await api(query);
      t.is(response.status, 400, query);
      t.is(((await response.json()) as { error: { code: string } }).error.code, 'invalid_request', query);
    }
    // One day, and the instant just before its end, are not reversed.
    for (const query of ['from=2026-11-20&to=2026-11-20', 'from=2026-11-20T23:59:59.999Z&to=2026-11-20']) t.is((await api(query)).status, 200, query);
  });
}
