/**
 * A mistyped console address (a person's bookmark, a link cut short) answers 404 with the console's
 * HTML error page, which says what happened and leads back to the console, as every other console
 * page error does (docs/console.md "Error pages"); the JSON API's unknown routes stay JSON.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { signIn, startConsole } from '../setup.js';

for (const kind of databasesUnderTest()) {
  test(`an unknown console page answers 404 with the console's HTML error page; the API stays JSON [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    const browser = await signIn(f, 'admin@acme.example');
    for (const path of ['/api/mcp/conections', '/api/mcp/connections/abc/revok', '/api/mcp/audit/exports']) {
      const page = await browser.request(path, { headers: { accept: 'text/html' } });
      t.is(page.status, 404, path);
      t.regex(page.headers.get('content-type') ?? '', /^text\/html/, `${path}: ${page.text.slice(0, 120)}`);
      t.regex(page.text, /<h1>Not found<\/h1>/, path);
      t.regex(page.text, /Error code <code>not_found<\/code>/, path);
      t.regex(page.text, /Back to the console/, path);
      t.regex(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
    }
    // The console's paths match as written: another case is no console page, and sets no cookie.
    for (const path of ['/API/MCP/login', '/api/mcp/Login', '/Api/mcp/v1/connections']) {
      const response = await fetch(`${f.server.url}${path}`, { redirect: 'manual' });
      t.is(response.status, 404, path);
      t.deepEqual(response.headers.getSetCookie(), [], path);
    }
    const api = await f.api('/nothing-here', await f.consoleToken('acmeAdmin', 'acme'));
    t.is(api.status, 404);
    t.is(((await api.json()) as { error?: { code?: string } }).error?.code, 'not_found');
  });

  test(`a console page a member may not open answers 403 under "Not allowed", with its code [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    const browser = await signIn(f, 'ann@acme.example');
    const page = await browser.request('/api/mcp/audit/verify', { headers: { accept: 'text/html' } });
    t.is(page.status, 403);
    t.regex(page.text, /<h1>Not allowed<\/h1>/);
    t.regex(page.text, /Error code <code>(forbidden|insufficient_scope)<\/code>/);
  });
}
