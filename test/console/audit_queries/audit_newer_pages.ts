/**
 * The audit log pages both ways: "Older records" and, on any page reached from the first one,
 * "Newer records" back, with the filters kept. Both are keyset cursors, so a page shows the same
 * records however many arrive meanwhile: the new ones are one more "Newer" page away.
 */
import test from 'ava';
import { appendAudit } from '../../../db/audit.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { unescapeHtml } from '../../helpers/oauth.js';
import { startConsole, signIn, type ConsoleFixture } from '../setup.js';

type Json = any;

const START = Date.UTC(2026, 0, 5, 9);

/** `count` forge calls named forge.tool_<n> a second apart from `from`, with an aegis call between every two. */
async function writeCalls(f: ConsoleFixture, from: number, count: number): Promise<void> {
  const { db } = f.server.portico.context;
  for (let n = from; n < from + count; n += 1) {
    await appendAudit(db, { tenantId: f.tenants.acme, kind: 'tool', product: 'forge', name: `forge.tool_${String(n).padStart(3, '0')}`, outcome: 'ok', time: START + n * 1000 });
    if (n % 2) await appendAudit(db, { tenantId: f.tenants.acme, kind: 'tool', product: 'aegis', name: 'aegis.list_scans', outcome: 'ok', time: START + n * 1000 + 500 });
  }
}

/** The numbers of the forge.tool_<n> records a page lists, in its order. */
function listed(html: string): number[] {
  return [...html.matchAll(/<td><code>forge\.tool_(\d+)<\/code><\/td>/g)].map((m) => Number(m[1]));
}

/** The page's link whose text starts with `text`, as a path. */
function link(html: string, text: string): string | undefined {
  const href = new RegExp(`<a [^>]*href="([^"]+)"[^>]*>${text}`).exec(html)?.[1];
  return href && unescapeHtml(href);
}

/** n, n-1, … down to `to`. */
const down = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

for (const kind of databasesUnderTest()) {
  test(`the audit page links to newer records as well as older ones, keeping the filters [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    await writeCalls(f, 0, 120);
    const browser = await signIn(f, 'admin@acme.example');
    const open = async (path: string) => {
      const page = await browser.request(path);
      t.is(page.status, 200, path);
      const older = link(page.text, 'Older records');
      const newer = link(page.text, '← Newer records');
      for (const href of [older, newer]) if (href) t.like(Object.fromEntries(new URL(href, f.server.url).searchParams), { product: 'forge', limit: '50' }, `${path}: a link dropped the filters`);
      return { rows: listed(page.text), older, newer };
    };

    const first = await open('/api/mcp/audit?product=forge&limit=50');
    t.deepEqual(first.rows, down(119, 70));
    t.is(first.newer, undefined, 'the first page has nothing newer');
    const second = await open(first.older!);
    t.deepEqual(second.rows, down(69, 20));
    t.truthy(second.newer, 'a page reached by Older has a way back');
    const third = await open(second.older!);
    t.deepEqual(third.rows, down(19, 0));
    t.is(third.older, undefined, 'the last page has nothing older');

    const backToSecond = await open(third.newer!);
    t.deepEqual(backToSecond.rows, second.rows);
    t.truthy(backToSecond.older);
    const backToFirst = await open(backToSecond.newer!);
    t.deepEqual(backToFirst.rows, first.rows);
    t.is(backToFirst.newer, undefined, 'nothing is newer than the newest records');
    t.deepEqual((await open(backToFirst.older!)).rows, second.rows, 'and forward again');

    // The JSON API's cursors go both ways too.
    const token = await f.consoleToken('acmeAdmin', 'acme');
    const names = (body: Json) => body.records.map((r: Json) => Number(r.name.slice('forge.tool_'.length)));
    const one: Json = await (await f.api('/audit?product=forge&limit=50', token)).json();
    t.is(one.prev_cursor, null);
    const two: Json = await (await f.api(`/audit?product=forge&limit=50&cursor=${one.next_cursor}`, token)).json();
    t.deepEqual(names(two), down(69, 20));
    const back: Json = await (await f.api(`/audit?product=forge&limit=50&cursor=${two.prev_cursor}`, token)).json();
    t.deepEqual(names(back), down(119, 70));
    t.is(back.prev_cursor, null);
    t.is(back.next_cursor, one.next_cursor);
  });

  test(`paging back to newer records shows each record once when new ones arrived meanwhile [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    await writeCalls(f, 0, 100);
    const browser = await signIn(f, 'admin@acme.example');
    const first = await browser.request('/api/mcp/audit?product=forge&limit=40');
    t.deepEqual(listed(first.text), down(99, 60));
    const second = await browser.request(link(first.text, 'Older records')!);
    t.deepEqual(listed(second.text), down(59, 20));

    await writeCalls(f, 100, 5);
    const newer = link(second.text, '← Newer records');
    if (!newer) return t.fail('the second page has no link to newer records');
    const back = await browser.request(newer);
    t.deepEqual(listed(back.text), down(99, 60), 'the page above shows the same records as before');
    const newest = await browser.request(link(back.text, '← Newer records')!);
    t.deepEqual(listed(newest.text), down(104, 100), 'the records that arrived are one page further');
    t.is(link(newest.text, '← Newer records'), undefined);
    t.deepEqual(listed((await browser.request(link(newest.text, 'Older records')!)).text), down(99, 60));
  });

  test(`a cursor of either direction that the API did not issue is refused as invalid_request [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    const token = await f.consoleToken('acmeAdmin', 'acme');
    for (const cursor of ['x', Buffer.from('n12.not-an-id').toString('base64url'), Buffer.from('m1.0190a0b0-0000-7000-8000-000000000000').toString('base64url')]) {
      const response = await f.api(`/audit?cursor=${cursor}`, token);
      t.is(response.status, 400, cursor);
      t.is(((await response.json()) as Json).error.code, 'invalid_request', cursor);
    }
  });
}
