import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportChunks } from '../../db/audit_export.js';
import type { DbAuditRow } from '../../db/audit.js';

/** Pages of records big enough that each page is several 64 KB chunks; `log` records when each page is read. */
async function* pages(log: string[], count: number, failAt?: number): AsyncGenerator<DbAuditRow[]> {
  try {
    for (let p = 1; p <= count; p += 1) {
      log.push(`read ${p}`);
      await sleep(1);
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
  await sleep(20);
});
