/**
 * Checkpoints: a chain's end (`seq:hash`) noted outside Portico. Whoever can write to the database
 * can rewrite records and recompute every hash and the stored head, and a file can lose its last
 * lines; verifying against a checkpoint noted earlier finds both, in the CLI, the console's API and
 * its page.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databasesUnderTest } from '../helpers/db.js';
import { signIn, startConsole, type ConsoleFixture } from '../console/setup.js';
import { appendAudit, chainRows, formatCheckpoint, GENESIS_HASH, parseCheckpoint, recordHash, type DbAuditRow } from '../../db/audit.js';
import { runAdmin } from '../../scripts/admin.js';

type Json = any;

async function admin(args: string[], url: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(args, { out: (l) => out.push(l), err: (l) => err.push(l) }, { DATABASE_URL: url });
  return { code, out, err };
}

async function tenRecords(f: ConsoleFixture): Promise<void> {
  for (let i = 0; i < 10; i += 1) {
    await appendAudit(f.server.portico.context.db, { tenantId: f.tenants.acme, kind: 'tool', product: 'forge', name: 'forge.delete_conversation', args: { i }, outcome: 'ok' });
  }
}

test('checkpoints are read as seq:hash and nothing else', (t) => {
  const hash = 'ab'.repeat(32);
  t.deepEqual(parseCheckpoint(`42:${hash}`), { seq: 42, hash });
  t.deepEqual(parseCheckpoint(` 42:${hash.toUpperCase()}\n`), { seq: 42, hash }, 'copied with spaces, or in capitals');
  t.is(formatCheckpoint({ seq: 42, hash }), `42:${hash}`);
  t.deepEqual(parseCheckpoint(`9007199254740991:${hash}`), { seq: Number.MAX_SAFE_INTEGER, hash }, 'the largest seq a number holds exactly');
  for (const bad of ['', '42', `0:${hash}`, `042:${hash}`, `-1:${hash}`, `42:${hash.slice(1)}`, `42:${hash}0`, `42:${'g'.repeat(64)}`, `4 2:${hash}`, `42;${hash}`, `99999999999999999:${hash}`, `9007199254740993:${hash}`]) {
    t.is(parseCheckpoint(bad), undefined, bad);
  }
});

for (const kind of databasesUnderTest()) {
  test(`a checkpoint finds a rewritten history whose hashes and head were recomputed [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const url = f.server.database.url;
      await tenRecords(f);
      const token = await f.consoleToken('acmeAdmin', 'acme');
      const clean: Json = await (await f.api('/audit/verify', token)).json();
      t.is(clean.ok, true);
      t.is(clean.end.seq, clean.checked);
      const noted = formatCheckpoint(clean.end);
      const cli = await admin(['audit', 'verify', '--tenant', 'acme'], url);
      t.deepEqual(cli.out, [`ok: ${clean.checked} records verified`, `chain end: ${noted}`]);

      // More records after the checkpoint was noted: the chain still passes through it.
      await appendAudit(db, { tenantId: f.tenants.acme, kind: 'tool', product: 'forge', name: 'forge.list_conversations', outcome: 'ok' });
      const later: Json = await (await f.api(`/audit/verify?checkpoint=${noted}`, token)).json();
      t.like(later, { ok: true, checked: clean.checked + 1, checkpoint: clean.end });
      t.is((await admin(['audit', 'verify', '--tenant', 'acme', '--checkpoint', noted], url)).out[0], `ok: ${clean.checked + 1} records verified, up to the checkpoint given`);

      // Someone with write access to the database changes the outcome of record 3 and recomputes
      // every hash after it and the stored head: the chain is consistent again on its own.
      const rows: DbAuditRow[] = [];
      for await (const row of chainRows(db, f.tenants.acme)) rows.push(row);
      let prev = GENESIS_HASH;
      for (const row of rows) {
        const forged: Omit<DbAuditRow, 'hash'> = { ...row, prev_hash: prev, outcome: row.seq === 3 ? 'forbidden_cross_tenant' : row.outcome };
        const hash = recordHash(forged);
        if (row.seq >= 3) await db('audit_log').where({ id: row.id }).update({ outcome: forged.outcome, prev_hash: prev, hash });
        prev = hash;
      }
      await db('audit_heads').where({ chain: f.tenants.acme }).update({ hash: prev });
      t.is(((await (await f.api('/audit/verify', token)).json()) as Json).ok, true, 'without a checkpoint the rewrite cannot be seen');

      const caught: Json = await (await f.api(`/audit/verify?checkpoint=${noted}`, token)).json();
      t.is(caught.ok, false);
      t.deepEqual(caught.first_broken, { seq: clean.end.seq, id: rows[clean.end.seq - 1].id, reason: 'the checkpoint given does not match this record' });
      const refused = await admin(['audit', 'verify', '--tenant', 'acme', '--checkpoint', noted], url);
      t.is(refused.code, 4);
      t.regex(refused.err.join('\n'), new RegExp(`broken at record seq ${clean.end.seq} .*the checkpoint given does not match this record`));

      // The page says the same, and offers the form to check against another checkpoint.
      const browser = await signIn(f, 'admin@acme.example');
      const page = await browser.request(`/api/mcp/audit/verify?checkpoint=${noted}`);
      t.is(page.status, 200);
      t.regex(page.text, /The chain is broken at record #10 .*the checkpoint given does not match this record/s);
      t.regex(page.text, new RegExp(`name="checkpoint" value="${noted}"`));
    } finally {
      await f.close();
    }
  });

  test(`a checkpoint finds the newest records deleted with the head moved back, in the database and in an export cut short [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-checkpoint-'));
    try {
      const { db } = f.server.portico.context;
      const url = f.server.database.url;
      await tenRecords(f);
      const token = await f.consoleToken('acmeAdmin', 'acme');

      // The whole chain's export names where the chain ended as it began.
      const response = await f.api('/audit/export?format=jsonl', token);
      t.is(response.status, 200);
      const head = response.headers.get('x-audit-chain-head')!;
      const lines = (await response.text()).trimEnd().split('\n');
      t.is(head, formatCheckpoint(JSON.parse(lines.at(-1)!)), 'the last record exported is the head');
      t.is((await f.api('/audit/export?format=jsonl&product=forge', token)).headers.get('x-audit-chain-head'), null, 'a selection is no chain: no head');

      const whole = path.join(dir, 'whole.jsonl');
      const cut = path.join(dir, 'cut.jsonl');
      fs.writeFileSync(whole, `${lines.join('\n')}\n`);
      fs.writeFileSync(cut, `${lines.slice(0, -2).join('\n')}\n`);
      t.deepEqual((await admin(['audit', 'verify', '--file', whole, '--checkpoint', head], url)).out, [`ok: ${lines.length} records verified, up to the checkpoint given`, `chain end: ${head}`]);
      t.is((await admin(['audit', 'verify', '--file', cut], url)).code, 0, 'a file cut short verifies on its own');
      const short = await admin(['audit', 'verify', '--file', cut, '--checkpoint', head], url);
      t.is(short.code, 4);
      t.regex(short.err.join('\n'), new RegExp(`records missing: the checkpoint given is at seq ${lines.length}, the last record is seq ${lines.length - 2}`));

      // In the database: the two newest records deleted and the head moved back onto the rest.
      const newest = await db('audit_log').where({ chain: f.tenants.acme }).orderBy('seq', 'desc').limit(3);
      await db('audit_log').whereIn('id', newest.slice(0, 2).map((r: DbAuditRow) => r.id)).delete();
      await db('audit_heads').where({ chain: f.tenants.acme }).update({ seq: newest[2].seq, hash: newest[2].hash });
      t.is(((await (await f.api('/audit/verify', token)).json()) as Json).ok, true, 'without a checkpoint the deletion cannot be seen');
      const caught: Json = await (await f.api(`/audit/verify?checkpoint=${head}`, token)).json();
      t.like(caught, { ok: false, first_broken: { seq: newest[2].seq + 1, reason: `records missing: the checkpoint given is at seq ${lines.length}, the last record is seq ${newest[2].seq}` } });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      await f.close();
    }
  });

  test(`a malformed checkpoint is refused before anything is read [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const token = await f.consoleToken('acmeAdmin', 'acme');
      for (const bad of ['zzz', `0:${'a'.repeat(64)}`, '12:abc']) {
        const response = await f.api(`/audit/verify?checkpoint=${encodeURIComponent(bad)}`, token);
        t.is(response.status, 400, bad);
        t.is(((await response.json()) as Json).error.code, 'invalid_request');
      }
      const twice = await f.api(`/audit/verify?checkpoint=1:${'a'.repeat(64)}&checkpoint=2:${'a'.repeat(64)}`, token);
      t.is(twice.status, 400, 'given twice');

      const browser = await signIn(f, 'admin@acme.example');
      const page = await browser.request('/api/mcp/audit/verify?checkpoint=nonsense');
      t.is(page.status, 400);
      t.regex(page.text, /checkpoint must be &#60;seq&#62;:&#60;hash&#62;/);
      t.is((await browser.request('/api/mcp/audit/verify?checkpoint=')).status, 200, 'the empty form field is no checkpoint');

      const cli = await admin(['audit', 'verify', '--tenant', 'acme', '--checkpoint', '7'], 'sqlite:/nonexistent/dir/portico.db');
      t.is(cli.code, 2, 'a usage error, before the database is opened');
      t.regex(cli.err.join('\n'), /--checkpoint must be <seq>:<hash>/);
    } finally {
      await f.close();
    }
  });
}
