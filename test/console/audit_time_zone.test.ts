/**
 * The console's `from`/`to` (docs/console.md) take ISO 8601 "a date, or a date and time with an
 * optional zone". Every time the console shows is UTC ("2026-03-01 10:00 UTC"), and a calendar
 * date is a UTC day, so a date-time without a zone is UTC too: not the zone the server process
 * happens to run in (TZ), which would make the same query select other records on another host.
 */
import test from 'ava';
import { appendAudit } from '../../db/audit.js';
import { databasesUnderTest } from '../helpers/db.js';
import { startConsole } from '../console/setup.js';

// The server runs in a zone that is not UTC, as many hosts do (the test server is in this process).
process.env.TZ = 'America/New_York';

type Json = any; // response bodies are asserted field by field

for (const kind of databasesUnderTest()) {
  test(`a date-time without a zone in from/to is UTC, whatever the server's time zone [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const at = Date.parse('2026-03-01T10:00:00Z');
      await appendAudit(db, { tenantId: f.tenants.acme, kind: 'admin', name: 'zone.marker', outcome: 'ok', time: at });
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const names = async (query: string) => {
        const response = await f.api(`/audit?tool=zone.marker&${query}`, admin);
        const body: Json = await response.json();
        t.is(response.status, 200, `${query}: ${JSON.stringify(body)}`);
        return (body.records ?? []).map((r: Json) => r.time);
      };
      const expected = ['2026-03-01T10:00:00.000Z'];
      // The same window, written four ways: all four select the record.
      t.deepEqual(await names('from=2026-03-01T09:59:00Z&to=2026-03-01T10:01:00Z'), expected, 'with Z');
      t.deepEqual(await names('from=2026-03-01T04:59:00-05:00&to=2026-03-01T05:01:00-05:00'), expected, 'with an offset');
      t.deepEqual(await names(`from=${at - 60_000}&to=${at + 60_000}`), expected, 'epoch ms');
      t.deepEqual(await names('from=2026-03-01T09:59&to=2026-03-01T10:01'), expected, 'without a zone: UTC, as the console shows times');
      t.deepEqual(await names('from=2026-03-01T09:59:30.5&to=2026-03-01T10:00:00.001'), expected, 'without a zone, with seconds');
      // And a window without a zone that is the server's local time of the record selects nothing.
      t.deepEqual(await names('from=2026-03-01T04:59&to=2026-03-01T05:01'), [], 'local wall-clock time is not UTC');
      // The export reads the same filters.
      const exported = await (await f.api('/audit/export?tool=zone.marker&from=2026-03-01T09:59&to=2026-03-01T10:01', admin)).text();
      t.is(exported.trim().split('\n').filter(Boolean).length, 1, exported);
    } finally {
      await f.close();
    }
  });
}
