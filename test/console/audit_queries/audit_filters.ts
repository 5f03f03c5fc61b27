/**
 * The audit log's filters (DESIGN.md §8: product, tool, client, connection, outcome, time; and
 * kind) each select exactly the records they name, alone and together, in the JSON listing and in
 * the export. The other audit tests read with one filter at a time or refuse bad values; none
 * noticed a filter that was accepted and then ignored.
 */
import test from 'ava';
import { appendAudit } from '../../../db/audit.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole, type ConsoleFixture } from '../setup.js';

type Json = any;

/** Records of a day long past, so that the console's own records (written now) fall outside `to`. */
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);

interface Planted {
  request: string;
  user: 'ann' | 'bob';
  client: string;
  product: string;
  kind: 'tool' | 'resource' | 'prompt';
  name: string;
  outcome: string;
  time: number;
}

const PLANTED: Planted[] = [
  { request: 'flt-1', user: 'ann', client: 'client-a', product: 'forge', kind: 'tool', name: 'forge.list_conversations', outcome: 'ok', time: T0 },
  { request: 'flt-2', user: 'bob', client: 'client-b', product: 'forge', kind: 'tool', name: 'forge.delete_conversation', outcome: 'confirmation_required', time: T0 + 60_000 },
  { request: 'flt-3', user: 'ann', client: 'client-a', product: 'forge', kind: 'resource', name: 'forge.conversations', outcome: 'ok', time: T0 + 120_000 },
  { request: 'flt-4', user: 'bob', client: 'client-b', product: 'aegis', kind: 'prompt', name: 'aegis.triage_findings', outcome: 'forbidden_cross_tenant', time: T0 + 180_000 },
  { request: 'flt-5', user: 'ann', client: 'client-b', product: 'aegis', kind: 'tool', name: 'aegis.list_scans', outcome: 'insufficient_scope', time: T0 + 240_000 },
];

async function plant(f: ConsoleFixture): Promise<void> {
  const { db } = f.server.portico.context;
  for (const p of PLANTED) {
    await appendAudit(db, {
      tenantId: f.tenants.acme, userId: f.users[p.user], clientId: p.client, connectionId: f.forge[p.user].connection.id,
      product: p.product, kind: p.kind, name: p.name, args: { n: p.request }, outcome: p.outcome, requestId: p.request, time: p.time,
    });
  }
  // The other organization's record with the same client, product and name: no filter reaches it.
  await appendAudit(db, {
    tenantId: f.tenants.globex, userId: f.users.globexAdmin, clientId: 'client-a', connectionId: f.forge.globexAdmin.connection.id,
    product: 'forge', kind: 'tool', name: 'forge.list_conversations', args: {}, outcome: 'ok', requestId: 'flt-globex', time: T0,
  });
}

/** The planted records a query selects, oldest first, by request id. */
function planted(rows: Json[]): string[] {
  return rows.filter((r) => String(r.request_id).startsWith('flt-')).map((r) => r.request_id).sort();
}

for (const kind of databasesUnderTest()) {
  test(`each audit filter selects exactly its records, in the listing and the export [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      await plant(f);
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const ann = f.forge.ann.connection.id;
      const bob = f.forge.bob.connection.id;
      const iso = (ms: number) => new Date(ms).toISOString();
      const cases: Array<[string, string[]]> = [
        ['', ['flt-1', 'flt-2', 'flt-3', 'flt-4', 'flt-5']],
        ['product=aegis', ['flt-4', 'flt-5']],
        ['tool=forge.list_conversations', ['flt-1']],
        ['client=client-a', ['flt-1', 'flt-3']],
        ['client=client-b', ['flt-2', 'flt-4', 'flt-5']],
        [`connection=${ann}`, ['flt-1', 'flt-3', 'flt-5']],
        [`connection=${bob}`, ['flt-2', 'flt-4']],
        ['outcome=ok', ['flt-1', 'flt-3']],
        ['outcome=forbidden_cross_tenant', ['flt-4']],
        ['kind=tool', ['flt-1', 'flt-2', 'flt-5']],
        ['kind=prompt', ['flt-4']],
        [`from=${iso(T0 + 120_000)}`, ['flt-3', 'flt-4', 'flt-5']],
        [`to=${iso(T0 + 120_000)}`, ['flt-1', 'flt-2']],
        [`from=${iso(T0 + 60_000)}&to=${iso(T0 + 180_000)}`, ['flt-2', 'flt-3']],
        // Together they narrow: every filter given must hold.
        [`client=client-b&connection=${ann}`, ['flt-5']],
        ['product=forge&kind=tool&outcome=ok', ['flt-1']],
        [`connection=${bob}&from=${iso(T0 + 100_000)}`, ['flt-4']],
        ['client=client-a&product=aegis', []],
      ];
      for (const [query, expected] of cases) {
        const listing = await f.api(`/audit?limit=100${query ? `&${query}` : ''}`, admin);
        t.is(listing.status, 200, query);
        const body: Json = await listing.json();
        t.true(body.records.every((r: Json) => r.tenant_id === f.tenants.acme), `${query}: only the caller's organization`);
        t.deepEqual(planted(body.records), expected, `listing ${query || '(no filter)'}`);

        const exported = await f.api(`/audit/export?format=jsonl${query ? `&${query}` : ''}`, admin);
        t.is(exported.status, 200, query);
        const lines = (await exported.text()).split('\n').filter(Boolean).map((line) => JSON.parse(line));
        t.deepEqual(planted(lines), expected, `export ${query || '(no filter)'}`);
      }
    } finally {
      await f.close();
    }
  });
}
