/**
 * An audit export whose reading fails (the database gone, a table unreadable) is a server error
 * like any other (docs/errors.md): the operator finds it in the log with its request id and a
 * stack, and the request's own log line does not say 200.
 */
import test from 'ava';
import type { Db } from '../../../db/connect.js';
import { appendAudit, AuditWriter, verifyStoredChain } from '../../../db/audit.js';
import { databasesUnderTest, type DbKind } from '../../helpers/db.js';
import { until } from '../../helpers/poll.js';
import { startConsole } from '../setup.js';

const UNREADABLE = 'test.unreadable';

/**
 * Makes the records named UNREADABLE fail when read, every other record readable and writable as
 * before; answers the table the records are in (for reading around the breakage) and the repair.
 */
async function breakReadsOf(db: Db, kind: DbKind): Promise<{ table: string; repair(): Promise<void> }> {
  if (kind === 'sqlite') {
    // A virtual column is computed when read: json_extract of text that is not JSON raises an error.
    await db.raw(`alter table audit_log add column unreadable integer generated always as (json_extract(case name when '${UNREADABLE}' then 'not json' else '0' end, '$')) virtual`);
    return { table: 'audit_log', repair: async () => void (await db.raw('alter table audit_log drop column unreadable')) };
  }
  await db.raw('alter table audit_log rename to audit_log_data');
  await db.raw(`create function unreadable(name text) returns integer language plpgsql immutable as $$ begin if name = '${UNREADABLE}' then raise exception 'unreadable record'; end if; return 0; end $$`);
  // A one-table view takes inserts as the table does; reading a marked record through it fails.
  await db.raw('create view audit_log as select *, unreadable(name) as unreadable from audit_log_data');
  return {
    table: 'audit_log_data',
    repair: async () => {
      await db.raw('drop view audit_log');
      await db.raw('alter table audit_log_data rename to audit_log');
      await db.raw('drop function unreadable(text)');
    },
  };
}

for (const kind of databasesUnderTest()) {
  test(`an export that fails reading the log answers internal and is logged with its request id [${kind}]`, async (t) => {
    const fixture = await startConsole(kind);
    const { db } = fixture.server.portico.context;
    try {
      const token = await fixture.consoleToken('acmeAdmin', 'acme');
      // Make the log unreadable: only the export's own queries read audit_log.
      await db.schema.renameTable('audit_log', 'audit_log_away');
      for (const query of ['', '&outcome=ok']) {
        const requestId = `export-fails${query ? '-filtered' : ''}`;
        // A connection cut without any answer is status 0 here.
        const response = await fixture.api(`/audit/export?format=jsonl${query}`, token, { headers: { 'x-request-id': requestId } }).catch(() => undefined);
        const text = (await response?.text().catch(() => '')) ?? '';
        t.is(response?.status ?? 0, 500, `${query || 'whole chain'}: ${text.slice(0, 200)}`);
        t.is(response?.headers.get('x-request-id'), requestId, 'the answer names its request id');
        if (response) t.is(JSON.parse(text).error.request_id, requestId);
        // The request's line is written once the server is done with it.
        const lineOf = (matches: (line: Record<string, any>) => boolean) =>
          fixture.server.logs.map((line) => JSON.parse(line) as Record<string, any>).find((line) => line.request_id === requestId && matches(line));
        const request = await until(10_000, async () => lineOf((line) => line.msg === 'request'));
        t.is(request?.status, 500, 'the request line tells the status the client got');
        const failure = lineOf((line) => line.level === 'error');
        t.truthy(failure, `an error line with request id ${requestId}`);
        t.regex(String(failure?.err?.stack ?? ''), /\n\s+at /, 'with a stack');
      }
    } finally {
      await db.schema.renameTable('audit_log_away', 'audit_log').catch(() => undefined);
      await fixture.close();
    }
  });

  test(`an export that fails after it began is recorded as failed, with its code, beside the record of its start, and the chain stays intact [${kind}]`, async (t) => {
    const fixture = await startConsole(kind);
    const { db } = fixture.server.portico.context;
    const tenantId = fixture.tenants.acme;
    try {
      const token = await fixture.consoleToken('acmeAdmin', 'acme');
      // More records than one page of the export before the unreadable one: its first records are sent, then reading fails.
      const writer = new AuditWriter(db);
      await Promise.all(Array.from({ length: 1000 }, (_, i) => writer.append({ tenantId, kind: 'admin', name: 'test.filler', args: { i }, outcome: 'ok' })));
      await appendAudit(db, { tenantId, kind: 'admin', name: UNREADABLE, outcome: 'ok' });
      const broken = await breakReadsOf(db, kind);
      try {
        const recordsOf = (requestId: string) => db(broken.table).where({ tenant_id: tenantId, request_id: requestId }).orderBy('seq').select('name', 'outcome');
        for (const [query, requestId, sent] of [['', 'export-cut', 200], [`&tool=${UNREADABLE}`, 'export-refused', 500]] as const) {
          const response = await fixture.api(`/audit/export?format=jsonl${query}`, token, { headers: { 'x-request-id': requestId } });
          t.is(response.status, sent, requestId);
          const text = await response.text().catch(() => '');
          if (sent === 200) t.false(text.includes(`"name":"${UNREADABLE}"`), 'the download ends short');
          const records = await until(5_000, async () => {
            const rows = await recordsOf(requestId);
            return rows.length >= 2 ? rows : undefined;
          });
          t.deepEqual(records, [{ name: 'audit.export', outcome: 'ok' }, { name: 'audit.export', outcome: 'internal' }], requestId);
        }
      } finally {
        await broken.repair();
      }
      t.like(await verifyStoredChain(db, tenantId), { ok: true }, 'the failure records extend the chain as any record does');
    } finally {
      await fixture.close();
    }
  });
}
