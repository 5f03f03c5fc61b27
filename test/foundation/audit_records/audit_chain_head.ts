/**
 * The chain verified against the database must end where the chain head (audit_heads)
 * says it ends. Deleting the newest records (tail truncation) or rewriting the head must be found,
 * by the CLI (`audit verify --tenant`) and by the console's verify alike.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole } from '../../console/setup.js';
import { appendAudit, recordHash, verifyStoredChain, type DbAuditRow } from '../../../db/audit.js';
import { runAdmin } from '../../../scripts/admin.js';

type Json = any;

for (const kind of databasesUnderTest()) {
  test(`verify finds the newest records deleted (tail truncated) and a rewritten chain head [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      for (let i = 0; i < 10; i += 1) await appendAudit(db, { tenantId: f.tenants.acme, kind: 'tool', product: 'forge', name: 'forge.delete_conversation', args: { i }, outcome: 'ok' });
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const clean: Json = await (await f.api('/audit/verify', admin)).json();
      t.is(clean.ok, true);
      const total: number = clean.checked;

      // Someone with database access deletes the two newest records (the evidence of the last calls).
      const newest = await db('audit_log').where({ chain: f.tenants.acme }).orderBy('seq', 'desc').limit(2);
      await db('audit_log').whereIn('id', newest.map((r: { id: string }) => r.id)).delete();

      const truncated: Json = await (await f.api('/audit/verify', admin)).json();
      t.is(truncated.ok, false, 'the console verify reports the missing tail');
      t.is(truncated.checked, total - 2);
      const io = () => {
        const out: string[] = [];
        const err: string[] = [];
        return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
      };
      const cli = io();
      const code = await runAdmin(['audit', 'verify', '--tenant', 'acme'], cli.io, { DATABASE_URL: f.server.database.url });
      t.is(code, 4, `audit verify --tenant exits 4 on a truncated chain (out: ${cli.out.join(' | ')})`);

      // The head rewritten to the truncated chain's end hides the truncation (that needs a checkpoint
      // kept outside the database: audit_checkpoint.test.ts), but a head that does not match the last record is a broken chain.
      const last = await db('audit_log').where({ chain: f.tenants.acme }).orderBy('seq', 'desc').first();
      await db('audit_heads').where({ chain: f.tenants.acme }).update({ seq: last.seq, hash: 'f'.repeat(64) });
      const badHead: Json = await (await f.api('/audit/verify', admin)).json();
      t.is(badHead.ok, false, 'a head whose hash is not the last record\'s is reported');
      const cli2 = io();
      t.is(await runAdmin(['audit', 'verify', '--tenant', 'acme'], cli2.io, { DATABASE_URL: f.server.database.url }), 4);

      // The head put back where the remaining records end: that alone is consistent again.
      await db('audit_heads').where({ chain: f.tenants.acme }).update({ seq: last.seq, hash: last.hash });
      t.is(((await (await f.api('/audit/verify', admin)).json()) as Json).ok, true);

      // A record forged onto the end of the chain (hash recomputed) that the head does not cover.
      const forged: Omit<DbAuditRow, 'hash'> = { ...last, id: '01900000-0000-7000-8000-000000000001', seq: last.seq + 1, name: 'forge.list_conversations', prev_hash: last.hash };
      await db('audit_log').insert({ ...forged, hash: recordHash(forged) });
      const past: Json = await (await f.api('/audit/verify', admin)).json();
      t.is(past.ok, false, 'a record past the chain head is reported');
      t.is(past.first_broken?.seq, last.seq + 1);
      await db('audit_log').where({ id: forged.id }).delete();

      // The head removed.
      await db('audit_heads').where({ chain: f.tenants.acme }).delete();
      const headless: Json = await (await f.api('/audit/verify', admin)).json();
      t.is(headless.ok, false, 'records without a head are reported');
    } finally {
      await f.close();
    }
  });

  test(`a chain verified while records are appended to it verifies [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      let writing = true;
      const writer = (async () => {
        for (let i = 0; i < 60; i += 1) await appendAudit(db, { tenantId: f.tenants.acme, kind: 'tool', product: 'forge', name: 'forge.list_conversations', args: { i }, outcome: 'ok' });
        writing = false;
      })();
      const results = [];
      while (writing) results.push(await verifyStoredChain(db, f.tenants.acme));
      await writer;
      results.push(await verifyStoredChain(db, f.tenants.acme));
      t.deepEqual(results.filter((r) => !r.ok), []);
      t.is(results.at(-1)!.checked, 60);
    } finally {
      await f.close();
    }
  });
}
