/**
 * A console API route asked with a method it does not serve answers 405 method_not_allowed with
 * Allow (docs/errors.md), not 404; a page asked so answers it with the console's error page and
 * its security headers, not the API's JSON.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { signIn, startConsole } from '../setup.js';

type Json = any; // response bodies are asserted field by field

for (const kind of databasesUnderTest()) {
  test(`a console API route asked with another method answers 405 method_not_allowed with Allow [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      for (const [method, path, allow] of [
        ['PUT', `/connections/${f.forge.ann.connection.id}`, /DELETE/],
        ['POST', '/connections', /GET/],
        ['DELETE', '/audit', /GET/],
      ] as const) {
        const response = await f.api(path, admin, { method });
        const body: Json = await response.json();
        t.is(response.status, 405, `${method} ${path}: ${JSON.stringify(body)}`);
        t.is(body.error?.code, 'method_not_allowed', `${method} ${path}`);
        t.regex(response.headers.get('allow') ?? '', allow, `${method} ${path}`);
      }
      const unknown = await f.api('/nothing-here', admin);
      t.is(unknown.status, 404, 'an unknown route stays 404');
    } finally {
      await f.close();
    }
  });

  test(`a console page asked with another method answers 405 with the console's error page and its headers [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = await signIn(f, 'admin@acme.example');
      for (const [method, path, allow] of [
        ['POST', '/api/mcp/connections', 'GET, HEAD'],
        ['PUT', '/api/mcp/audit', 'GET, HEAD'],
        ['DELETE', '/api/mcp/login', 'GET, HEAD, POST'],
        ['POST', '/api/mcp', 'GET, HEAD'],
        ['DELETE', `/api/mcp/connections/${f.forge.ann.connection.id}/revoke`, 'GET, HEAD, POST'],
      ] as const) {
        const page = await browser.request(path, { method });
        t.is(page.status, 405, `${method} ${path}: ${page.text.slice(0, 200)}`);
        t.is((page.headers.get('allow') ?? '').split(', ').sort().join(', '), allow, `${method} ${path}`);
        t.regex(page.headers.get('content-type') ?? '', /^text\/html/, `${method} ${path}`);
        t.regex(page.headers.get('content-security-policy') ?? '', /default-src 'none'.*frame-ancestors 'none'/, `${method} ${path}`);
        t.is(page.headers.get('x-frame-options'), 'DENY', `${method} ${path}`);
        t.is(page.headers.get('cache-control'), 'no-store', `${method} ${path}`);
        t.regex(page.text, /Error code <code>method_not_allowed<\/code>/, `${method} ${path}`);
      }
      t.is((await f.server.portico.context.db('connections').where({ id: f.forge.ann.connection.id }).first()).revoked_at, null);
    } finally {
      await f.close();
    }
  });
}
