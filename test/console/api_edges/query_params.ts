/**
 * Every console API route and page takes a known set of query parameters, each once: any other, or
 * one given twice, is 400 invalid_request naming it (JSON for the API, the error page for pages),
 * never ignored. An export does not take a listing's `limit` and `cursor`, and its audit record
 * holds only the filters it applied.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole, signIn } from '../setup.js';

type Json = any; // response bodies are asserted field by field

for (const kind of databasesUnderTest()) {
  test(`the console API refuses unknown and repeated query parameters, naming them, on every route [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const ann = f.forge.ann.connection.id;
      const exports = () => db('audit_log').where({ name: 'audit.export' }).count({ n: '*' }).first().then((r) => Number(r?.n));
      for (const [method, path, named] of [
        ['GET', '/connections?foo=1', 'foo'],
        ['GET', '/connections?include_revoked=true&foo=', 'foo'],
        ['GET', '/connections?cursor=a&cursor=b', 'cursor'],
        ['GET', `/connections/${ann}?foo=1`, 'foo'],
        ['DELETE', `/connections/${ann}?foo=1`, 'foo'],
        ['GET', '/audit?foo=1', 'foo'],
        ['GET', '/audit?format=jsonl', 'format'],
        ['GET', '/audit/export?format=jsonl&limit=5', 'limit'],
        ['GET', '/audit/export?format=jsonl&cursor=abc', 'cursor'],
        ['GET', '/audit/export?format=jsonl&foo=1', 'foo'],
        ['GET', '/audit/export?format=jsonl&format=csv', 'format'],
        ['GET', '/audit/verify?foo=1', 'foo'],
        ['GET', '/audit/verify?checkpoint=1:a&checkpoint=1:b', 'checkpoint'],
      ] as const) {
        const response = await f.api(path, admin, { method });
        const body: Json = await response.json();
        t.is(response.status, 400, `${method} ${path}: ${JSON.stringify(body)}`);
        t.is(body.error?.code, 'invalid_request', `${method} ${path}`);
        t.true(String(body.error?.message).includes(named), `${method} ${path} names ${named}: ${body.error?.message}`);
      }
      // Nothing was done for a refused request: the connection is live, no export was taken or recorded.
      t.is((await db('connections').where({ id: ann }).first()).revoked_at, null);
      t.is(await exports(), 0);
      // Nor is a refused request a use of the API's own connection (its "last used" and call count).
      const apiConnection = () => db('connections').where({ tenant_id: f.tenants.acme, product: 'console' }).first();
      t.like(await apiConnection(), { call_count: 0, last_used_at: null });

      // The parameters a route takes still work, and an export's record holds what it applied.
      const list = await f.api('/connections?include_revoked=true&limit=2', admin);
      t.is(list.status, 200);
      t.is((await apiConnection()).call_count, 1);
      const exported = await f.api('/audit/export?format=jsonl&product=forge', admin);
      t.is(exported.status, 200);
      await exported.text();
      const [record] = await db('audit_log').where({ name: 'audit.export' });
      t.deepEqual(JSON.parse(record.args_redacted), { product: 'forge', format: 'jsonl', whole: false });
    } finally {
      await f.close();
    }
  });

  test(`the console pages refuse unknown and repeated query parameters with the error page [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const browser = await signIn(f, 'admin@acme.example');
      const ann = f.forge.ann.connection.id;
      for (const [path, named] of [
        ['/connections?foo=1', 'foo'],
        ['/connections?revoked=1&revoked=1', 'revoked'],
        ['/connections?revoked=yes', 'revoked'],
        [`/connections/${ann}?foo=1`, 'foo'],
        [`/connections/${ann}/revoke?foo=1`, 'foo'],
        ['/audit?foo=1', 'foo'],
        ['/audit/export?format=csv&limit=5', 'limit'],
        ['/audit/export?format=csv&foo=1', 'foo'],
        ['/audit/verify?foo=1', 'foo'],
        ['/connect?foo=1', 'foo'],
        ['/connect?read_only=1&read_only=1', 'read_only'],
        // A value it does not know is refused, not read as "every scope" (write scopes for a read-only request).
        ['/connect?read_only=yes', 'read_only'],
        ['/organization?foo=1', 'foo'],
        ['/login?foo=1', 'foo'],
      ] as const) {
        const page = await browser.request(`/api/mcp${path}`);
        t.is(page.status, 400, `${path}: ${page.text.slice(0, 200)}`);
        t.regex(page.headers.get('content-type') ?? '', /^text\/html/, path);
        t.regex(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
        t.regex(page.text, /Error code <code>invalid_request<\/code>/, path);
        t.true(page.text.includes(named), `${path} names ${named}`);
      }
      t.is(Number((await db('audit_log').where({ name: 'audit.export' }).count({ n: '*' }).first())?.n), 0, 'no export taken');
      // What the pages' own links and forms send is taken (several products on the connect page:
      // test/clients/console_connect.test.ts), the audit filters' empty fields included.
      // An empty one is absent on every page (docs/console.md), `revoked` and an export's `format` too.
      for (const path of ['/connect?read_only=1', '/connections?revoked=1', '/connections?revoked=', '/audit?product=&tool=&client=&connection=&outcome=&kind=&from=&to=', '/audit/export?format=&product=']) {
        t.is((await browser.request(`/api/mcp${path}`)).status, 200, path);
      }
      // The audit page's export links keep its filters, not its limit and cursor (refused by the export).
      const audit = await browser.request('/api/mcp/audit?limit=1&outcome=ok');
      const link = /href="(\/api\/mcp\/audit\/export\?[^"]*)"/.exec(audit.text)?.[1]?.replaceAll('&#61;', '=').replaceAll('&amp;', '&');
      t.is(link, '/api/mcp/audit/export?outcome=ok&format=jsonl');
      t.is((await browser.request(link!)).status, 200);
    } finally {
      await f.close();
    }
  });
}
