/**
 * `from` and `to` on the console's audit listing and export are ISO 8601 or epoch milliseconds, and
 * only instants a Date can hold: anything else is 400 invalid_request, never a 500 from the
 * database (PostgreSQL's bigint) nor an export stream cut off without an answer.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole, signIn } from '../setup.js';

type Json = any; // response bodies are asserted field by field

const OUT_OF_RANGE = ['from=99999999999999999999', 'to=9223372036854775807', `from=${'9'.repeat(400)}`, 'from=-5', 'to=Nov%201%202026', 'from=2026-13-01', 'to=2026-02-30'];

for (const kind of databasesUnderTest()) {
  test(`from/to beyond any date, or in a form that is not ISO 8601 or epoch ms, get a stable code, never a 500 or a dropped export [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      for (const query of OUT_OF_RANGE) {
        const listing = await f.api(`/audit?${query}`, admin);
        const body: Json = await listing.json();
        t.is(listing.status, 400, `${query}: ${JSON.stringify(body)}`);
        t.is(body.error.code, 'invalid_request', query);

        const exported = await f.api(`/audit/export?${query}`, admin).then(async (r) => ({ status: r.status, text: await r.text() }), (e: unknown) => ({ status: 0, text: String((e as Error).cause ?? e) }));
        t.is(exported.status, 400, `export ${query}: ${exported.text.slice(0, 200)}`);
        t.regex(exported.text, /invalid_request/);
      }
      const browser = await signIn(f, 'admin@acme.example');
      const page = await browser.request(`/api/mcp/audit?${OUT_OF_RANGE[0]}`);
      t.is(page.status, 400, 'the audit page');
    } finally {
      await f.close();
    }
  });

  test(`a filter given twice is refused on the audit page as by the API, not dropped to show every record [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = await signIn(f, 'admin@acme.example');
      await browser.request('/api/mcp/audit/export?format=jsonl'); // a record whose outcome is ok
      for (const query of ['outcome=denied&outcome=denied', 'product=forge&product=', 'connection=a&connection=b']) {
        const page = await browser.request(`/api/mcp/audit?${query}`);
        t.is(page.status, 400, query);
        t.regex(page.text, /Error code <code>invalid_request<\/code>/, query);
        t.regex(page.text, /may be given once/, query);
      }
      const one = await browser.request('/api/mcp/audit?outcome=denied');
      t.is(one.status, 200);
      t.regex(one.text, /No audit records match/);
    } finally {
      await f.close();
    }
  });
}

for (const kind of databasesUnderTest()) {
  test(`a reversed from/to range and a limit that is not plain digits are refused, naming them, not answered with an empty or some page [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const refused = async (path: string, named: RegExp) => {
        const response = await f.api(path, admin);
        const body: Json = await response.json();
        t.is(response.status, 400, `${path}: ${JSON.stringify(body)}`);
        t.is(body.error?.code, 'invalid_request', path);
        t.regex(String(body.error?.message), named, path);
      };
      for (const range of ['from=2026-02-01&to=2026-01-01', 'from=2026-01-01T12:00Z&to=2026-01-01T11:59Z', 'from=1767225600001&to=1767225600000', 'from=2026-01-02T00:01Z&to=2026-01-01']) {
        await refused(`/audit?${range}`, /from .* later than to/);
        await refused(`/audit/export?format=jsonl&${range}`, /from .* later than to/);
      }
      for (const limit of ['1e2', '%2B5', '5.0', '0x10', '%205', '-1']) {
        await refused(`/audit?limit=${limit}`, /limit must be/);
        await refused(`/connections?limit=${limit}`, /limit must be/);
      }
      t.is((await f.api('/audit?limit=5', admin)).status, 200);
      // A calendar date as `to` is its whole day, the same instant as T24:00 of it (ISO 8601's end of day).
      for (const range of ['from=2026-01-01&to=2026-01-01', 'from=2026-01-02T00:00Z&to=2026-01-01T24:00Z', 'from=2026-01-01T10:00Z&to=2026-01-01T10:00Z']) {
        t.is((await f.api(`/audit?${range}`, admin)).status, 200, range);
      }
      const browser = await signIn(f, 'admin@acme.example');
      const page = await browser.request('/api/mcp/audit?from=2026-02-01&to=2026-01-01');
      t.is(page.status, 400, 'the audit page');
      t.regex(page.text, /Error code <code>invalid_request<\/code>/);
    } finally {
      await f.close();
    }
  });
}
