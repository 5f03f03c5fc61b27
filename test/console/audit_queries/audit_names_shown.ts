/**
 * A tool or prompt name in the audit log is the caller's text (docs/console.md): a connected
 * client can call a tool that does not exist under any name up to 200 characters. On the console's
 * audit page such a name must read as what it is: characters that reorder or hide text
 * (bidirectional overrides, zero-width characters, other controls) are shown as visible escapes,
 * so "\u202Eetadpu_rof" cannot pose as a name it is not (the rule client names follow, checklist G6).
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { auditOf, DEMO_PASSWORD, grant, rawCall, startMcpServer } from '../../helpers/mcp.js';
import { Session } from '../setup.js';


for (const kind of databasesUnderTest()) {
  test(`a caller's tool name with bidi overrides or zero-width characters is shown escaped on the audit page [${kind}]`, async (t) => {
    t.timeout(120_000);
    const server = await startMcpServer(kind);
    t.teardown(() => server.close());
    const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
    const names = ['forge.\u202Esnoitasrevnoc_tsil', 'forge.list\u200B_conversations'];
    for (const name of names) {
      const answer = await rawCall(server, token, 'forge', 'tools/call', { name, arguments: {} });
      t.regex(JSON.stringify(answer.body), /unknown_tool/);
    }
    t.is((await auditOf(server, 'acme', { outcome: 'unknown_tool' })).length, names.length, 'both calls are in the log, as the caller named them');

    const browser = new Session(server.url);
    const login = await browser.request('/api/mcp/login');
    await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'admin@acme.example', password: DEMO_PASSWORD } });
    const page = await browser.request('/api/mcp/audit?outcome=unknown_tool');
    t.is(page.status, 200);
    t.false(/[\u202A-\u202E\u2066-\u2069\u200B-\u200F]/.test(page.text), 'the page carries the raw formatting characters');
    t.regex(page.text, /forge\.\\u\{?202E\}?snoitasrevnoc_tsil/i, 'the override is shown as an escape');
    t.regex(page.text, /forge\.list\\u\{?200B\}?_conversations/i, 'the zero-width space is shown as an escape');
  });
}
