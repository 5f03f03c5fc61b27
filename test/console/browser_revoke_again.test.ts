/**
 * A revoke page seen again, in a real browser (Debian's chromium through playwright-core): after a
 * revocation, Back shows the page for what the connection now is (revoked, no Revoke button), and
 * the Revoke button of a tab left open from before says that the connection was already revoked:
 * no error page, and no second `connection.revoke` record claiming a revocation.
 */
import test from 'ava';
import type { Page } from 'playwright-core';
import { databasesUnderTest } from '../helpers/db.js';
import { serverInBrowser, sharedBrowser, signInToConsole } from '../helpers/browser.js';
import { issueAccessToken } from '../helpers/grants.js';

const browserOf = sharedBrowser();

for (const kind of databasesUnderTest()) {
  test(`a revoke page reached again with Back or left open in another tab says the connection is already revoked [${kind}]`, async (t) => {
    const { server, context } = await serverInBrowser(t, browserOf(), kind);
    const { connection } = await issueAccessToken(server.db, {
      tenantId: server.tenants.acme.id, userId: server.users['member@acme.example'], product: 'forge', resource: `${server.mcpUrl}/forge`, scopes: ['forge.chat.read'],
    });
    const revokePath = `${server.url}/api/mcp/connections/${connection.id}/revoke`;

    const first = await context.newPage();
    await signInToConsole(first, server.url, 'admin@acme.example');
    await first.goto(revokePath);
    // The same page in a second tab, opened before the revocation and left there.
    const stale = await context.newPage();
    await stale.goto(revokePath);

    await first.getByRole('button', { name: 'Revoke connection' }).click();
    await first.waitForURL(/notice=revoked/);
    t.regex(await first.getByRole('status').innerText(), /was revoked/);

    const back = await first.goBack();
    t.is(back?.status(), 200);
    t.regex(first.url(), /\/revoke$/);
    const main = (page: Page) => page.locator('main').innerText();
    t.regex(await main(first), /already revoked/i, 'the page shows that the connection is revoked');
    t.is(await first.getByRole('button', { name: 'Revoke connection' }).count(), 0, 'the Revoke button is still offered');

    await stale.getByRole('button', { name: 'Revoke connection' }).click();
    await stale.waitForLoadState();
    t.regex(await main(stale), /already revoked/i, `the stale tab was not told: ${await main(stale)}`);
    t.notRegex(await main(stale), /Something is not right|Error code/, 'an error page');
    t.notRegex(await main(stale), /The connection was revoked\./, 'it claims a revocation of its own');
    t.is((await server.db('audit_log').where({ name: 'connection.revoke', connection_id: connection.id })).length, 1, 'one revocation, one record');
  });
}
