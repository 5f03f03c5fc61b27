/**
 * The console in a real browser (Debian's chromium through playwright-core): a person signs in,
 * sees the connection an MCP client made a moment ago, revokes it, and the client is cut off at
 * once — its next tools/call gets 401 and its open GET stream ends.
 */
import test from 'ava';
import { launchChromium, signInToConsole } from '../helpers/browser.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { databasesUnderTest } from '../helpers/db.js';
import { startMcpServer, openSession, rawCall, DEMO_PASSWORD } from '../helpers/mcp.js';
import { authorizeWithPassword } from '../helpers/oauth.js';


for (const kind of databasesUnderTest()) {
  test(`revoking in the console cuts off a live MCP client [${kind}]`, async (t) => {
    t.timeout(180_000); // a cold Chromium's first start (font cache) can take a minute
    const server = await startMcpServer(kind);
    t.teardown(() => server.close()); // also when the browser cannot start: a server left open keeps the worker alive
    const browser = await launchChromium();
    t.teardown(() => browser.close());
    // An MCP client connects through the real OAuth flow and works.
    const resource = `${server.mcpUrl}/forge`;
    const tokens = await authorizeWithPassword(server.url, {
      email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes: ['forge.chat.read', 'forge.chat.write'], clientName: 'Browser Test Assistant',
    });
    const client = new Client({ name: 'browser-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(resource), { requestInit: { headers: { authorization: `Bearer ${tokens.accessToken}` } } }));
    const created = await client.callTool({ name: 'forge.create_conversation', arguments: { title: 'Before revocation' } });
    t.falsy(created.isError);

    // A second session of the same connection holds a GET stream open, as clients do for server messages.
    const sessionId = await openSession(server, tokens.accessToken, 'forge');
    const stream = await fetch(resource, { headers: { authorization: `Bearer ${tokens.accessToken}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } });
    t.is(stream.status, 200);
    const reader = stream.body!.getReader();
    const streamEnded = (async () => {
      for (;;) {
        const { done } = await reader.read().catch(() => ({ done: true }));
        if (done) return true;
      }
    })();

    // The admin signs in to the console in a real browser and revokes that connection.
    const page = await browser.newPage();
    await signInToConsole(page, server.url, 'admin@acme.example');
    const row = page.locator('tr', { hasText: 'Browser Test Assistant' });
    await t.notThrowsAsync(row.waitFor(), 'the connection made by the client is listed');
    t.regex(await row.innerText(), /member@acme\.example/);
    await row.getByRole('link', { name: 'Details' }).click();
    await page.getByRole('link', { name: 'Revoke…' }).click();
    await page.getByRole('button', { name: 'Revoke connection' }).click();
    await page.waitForURL(/notice=revoked/);
    t.regex(await page.getByRole('status').innerText(), /was revoked/);

    // The client's very next call fails with 401 connection_revoked, and its stream has ended.
    const after = await rawCall(server, tokens.accessToken, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} });
    t.is(after.status, 401);
    t.regex(JSON.stringify(after.body), /connection_revoked/);
    await t.throwsAsync(client.callTool({ name: 'forge.list_conversations', arguments: {} }));
    const ended = await Promise.race([streamEnded, new Promise<false>((resolve) => setTimeout(() => resolve(false), 5_000))]);
    t.true(ended, 'the open GET stream was closed by the server');
    await client.close().catch(() => undefined);
  });
}
