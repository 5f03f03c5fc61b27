import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportChunks, readExport } from '../../db/audit_export.js';
import { GENESIS_HASH, recordHash, sha256Hex, verifyChain, type DbAuditRow } from '../../db/audit.js';
import { intactChain } from '../helpers/audit.js';

/** Pages of records big enough that each page is several 64 KB chunks; `log` records when each page is read. */
async function* pages(log: string[], count: number, failAt?: number): AsyncGenerator<DbAuditRow[]> {
  try {
    for (let p = 1; p <= count; p += 1) {
      log.push(`read ${p}`);
      await sleep(1); // a read takes a moment, as the database's does
      if (p === failAt) throw new Error(`page ${p} failed`);
      yield Array.from({ length: 100 }, (_, i) => ({ id: `${p}-${i}`, seq: p * 100 + i, args_redacted: 'x'.repeat(2_000) }) as unknown as DbAuditRow);
    }
  } finally {
    log.push('closed');
  }
}

test('an export asks for the next page before it writes this one, and keeps the records in order', async (t) => {
  const log: string[] = [];
  let text = '';
  for await (const chunk of exportChunks(pages(log, 3), 'jsonl')) {
    log.push('chunk');
    text += chunk;
  }
  t.deepEqual(log.slice(0, 3), ['read 1', 'read 2', 'chunk']);
  t.deepEqual(log.filter((e) => e !== 'chunk'), ['read 1', 'read 2', 'read 3', 'closed']);
  const ids = text.trimEnd().split('\n').map((line) => (JSON.parse(line) as { id: string }).id);
  t.deepEqual(ids, [1, 2, 3].flatMap((p) => Array.from({ length: 100 }, (_, i) => `${p}-${i}`)));
});

test('a page that fails while the one before is being written ends the export with its error, and nothing is left unhandled', async (t) => {
  const log: string[] = [];
  let chunks = 0;
  await t.throwsAsync(async () => {
    for await (const _chunk of exportChunks(pages(log, 5, 3), 'csv')) {
      chunks += 1;
      await sleep(5); // a slow client: page 3 fails while this chunk of page 2 waits
    }
  }, { message: 'page 3 failed' });
  t.true(chunks >= 2);
  t.deepEqual(log, ['read 1', 'read 2', 'read 3', 'closed']);
  await sleep(20); // an unhandled rejection would fail the run here
});

test('an export stopped early (the client went away) closes its source and leaves no page pending', async (t) => {
  const log: string[] = [];
  for await (const _chunk of exportChunks(pages(log, 10, 2), 'jsonl')) break;
  t.deepEqual(log, ['read 1', 'read 2', 'closed']);
  await sleep(20); // an unhandled rejection (a page left pending) would fail the run here
});

test('a CSV export neutralises cells a spreadsheet would run as formulas, and still reads back and verifies exactly', async (t) => {
  // Tool names and arguments are the caller's text: a refused call can log any name it likes.
  const names = ['=HYPERLINK("https://evil.example/x","Open report")', '+1+cmd|\' /C calc\'!A0', '-2+3', '@SUM(A1:A9)', '\t=1', '\r=1', "'quoted", "''twice", 'forge.list_conversations', '', 'a=b', 'two\r\nlines', 'a lone\rCR', 'a\nLF'];
  const rows: DbAuditRow[] = [];
  let prev = GENESIS_HASH;
  names.forEach((name, i) => {
    const partial = {
      id: `0000000${i}-0000-4000-8000-000000000000`, chain: 't1', seq: i + 1, time: 1_700_000_000_000 + i, tenant_id: 't1', user_id: null, client_id: 'c',
      connection_id: null, product: 'forge', kind: 'tool' as const, name, args_digest: sha256Hex(name), args_redacted: JSON.stringify({ note: name }),
      outcome: 'unknown_tool', duration_ms: 0, request_id: `=req-${i}`, prev_hash: prev,
    };
    const row = { ...partial, hash: recordHash(partial) };
    rows.push(row);
    prev = row.hash;
  });
  let text = '';
  for await (const chunk of exportChunks((async function* () { yield rows; })(), 'csv')) text += chunk;

  // Every cell, with its quotes taken off, starts with something a spreadsheet shows as text.
  const cells = text.split('\r\n').slice(1, -1).flatMap((line) => line.match(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)!.map((cell) => cell.replace(/,$/, '').replace(/^"/, '')));
  t.true(cells.length > names.length * 10);
  for (const cell of cells) t.notRegex(cell, /^[=+\-@\t\r]/, `a formula cell: ${JSON.stringify(cell)}`);
  t.true(text.includes(`"'=HYPERLINK(""https://evil.example/x"",""Open report"")"`));
  t.true(text.includes(`,'-2+3,`));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-csv-'));
  try {
    const file = path.join(dir, 'export.csv');
    fs.writeFileSync(file, text);
    const read: DbAuditRow[] = [];
    for await (const row of readExport(file)) read.push(row);
    t.deepEqual(read.map((row) => row.name), names);
    t.deepEqual(read.map((row) => row.request_id), names.map((_, i) => `=req-${i}`));
    t.deepEqual(await verifyChain(read), intactChain(read));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
