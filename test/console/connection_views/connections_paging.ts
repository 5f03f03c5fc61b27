/**
 * Every connection of an organization can be reached, in the API and on the page, however many
 * there are: the listing is paginated by keyset (db/keyset.ts), newest first. It used to stop at
 * the newest 500 without saying so, and an admin could neither see nor revoke the older ones.
 */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { signIn, startConsole, type ConsoleFixture } from '../setup.js';

type Json = any; // response bodies are asserted field by field

/** `count` more live connections of ann's in acme, the oldest created at 1 ms. */
async function addConnections(f: ConsoleFixture, count: number): Promise<string[]> {
  const { db, config } = f.server.portico.context;
  const rows = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(), grant_id: randomUUID(), tenant_id: f.tenants.acme, user_id: f.users.ann, client_id: 'dcr_paging', client_kind: 'dynamic',
    product: 'forge', resource: `${config.mcpUrl}/forge`, scopes: 'forge.chat.read', created_at: i === 0 ? 1 : 1_000 + Math.floor(i / 3), call_count: 0,
  }));
  for (let i = 0; i < rows.length; i += 100) await db('connections').insert(rows.slice(i, i + 100));
  return rows.map((r) => r.id);
}

for (const kind of databasesUnderTest()) {
  test(`the connections API pages through every connection, both ways, and refuses bad paging parameters [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const added = await addConnections(f, 520);
      // The console token is a connection too.
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const { db } = f.server.portico.context;
      const live: string[] = await db('connections').where({ tenant_id: f.tenants.acme }).whereNull('revoked_at').pluck('id');
      t.true(live.length > 520);

      const pages: Json[] = [];
      let cursor: string | null = null;
      do {
        const response = await f.api(`/connections?limit=200${cursor ? `&cursor=${cursor}` : ''}`, admin);
        t.is(response.status, 200);
        const page: Json = await response.json();
        pages.push(page);
        cursor = page.next_cursor;
      } while (cursor && pages.length < 10);
      const seen = pages.flatMap((p) => p.connections.map((c: Json) => c.id));
      t.deepEqual(seen.filter((id, i) => seen.indexOf(id) !== i), [], 'no connection twice');
      t.is(seen.length, live.length, 'every connection once');
      t.deepEqual([...seen].sort(), [...live].sort());
      t.is(seen.at(-1), added[0], 'the oldest comes last');
      const times = pages.flatMap((p) => p.connections.map((c: Json) => c.created_at as number));
      t.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
      t.is(pages[0].prev_cursor, null);
      t.true(pages.slice(0, -1).every((p) => p.connections.length === 200));

      // Back from the second page is the first page.
      const back: Json = await (await f.api(`/connections?limit=200&cursor=${pages[1].prev_cursor}`, admin)).json();
      t.deepEqual(back.connections.map((c: Json) => c.id), pages[0].connections.map((c: Json) => c.id));

      // Unasked, a page holds 100.
      const first: Json = await (await f.api('/connections', admin)).json();
      t.is(first.connections.length, 100);
      t.truthy(first.next_cursor);

      for (const query of ['limit=0', 'limit=501', 'limit=abc', 'limit=1.5', 'cursor=not-a-cursor', 'limit=5&limit=6', `cursor=${pages[1].prev_cursor}&cursor=x`]) {
        const refused = await f.api(`/connections?${query}`, admin);
        t.is(refused.status, 400, query);
        t.is(((await refused.json()) as Json).error.code, 'invalid_request', query);
      }
    } finally {
      await f.close();
    }
  });

  test(`the connections page links older and newer pages, keeping "Show revoked", to the oldest connection [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const added = await addConnections(f, 520);
      const admin = await signIn(f, 'admin@acme.example');
      let page = await admin.request('/api/mcp/connections?revoked=1');
      t.is(page.status, 200);
      t.notRegex(page.text, /Newer connections/);
      const visited: string[] = [];
      for (let hops = 0; hops < 8; hops++) {
        visited.push(...[...page.text.matchAll(/data-connection="([^"]+)"/g)].map((m) => m[1]));
        const older = /href="([^"]+)">Older connections →/.exec(page.text);
        if (!older) break;
        const href = older[1].replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code))).replaceAll('&amp;', '&');
        t.regex(href, /[?&]revoked=1(&|$)/, 'the pager keeps Show revoked');
        page = await admin.request(href);
        t.is(page.status, 200);
        t.regex(page.text, /← Newer connections/);
      }
      t.true(visited.includes(added[0]), 'the oldest connection is reachable');
      t.is(new Set(visited).size, visited.length);
      t.true(visited.length > 520);
    } finally {
      await f.close();
    }
  });
}
