import test from 'ava';
import { uuidv7, uuidv7Time } from '../../../db/ids.js';
import { testOnEachDatabase } from '../../helpers/db.js';
import { createTenant } from '../../../db/accounts.js';
import { appendAudit, chainRows } from '../../../db/audit.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('record ids are RFC 9562 version 7 UUIDs carrying the millisecond they were made in', (t) => {
  const before = Date.now();
  const id = uuidv7();
  const after = Date.now();
  t.regex(id, V7);
  t.true(uuidv7Time(id) >= before && uuidv7Time(id) <= after, `${uuidv7Time(id)} not within [${before}, ${after}]`);
});

test('ids sort in the order they were made, also past 4,096 in one millisecond and when the clock goes back', (t) => {
  const now = Date.now() + 60_000; // a millisecond no earlier test used
  const ids = Array.from({ length: 10_000 }, () => uuidv7(now));
  ids.push(uuidv7(now - 5_000)); // the clock went back
  ids.push(uuidv7());
  for (let i = 1; i < ids.length; i += 1) t.true(ids[i - 1] < ids[i], `id ${i} sorts before id ${i - 1}`);
  t.is(new Set(ids).size, ids.length);
  t.true(ids.every((id) => V7.test(id)));
  t.is(uuidv7Time(ids[0]), now);
  // 10,000 ids need three milliseconds of 4,096 counts: later ones borrow the next milliseconds.
  t.true(uuidv7Time(ids[9_999]) > now && uuidv7Time(ids[9_999]) <= now + 3);
});

testOnEachDatabase('audit records get time-ordered ids: the id order is the chain order', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  for (let i = 0; i < 20; i += 1) await appendAudit(db, { tenantId: acme.id, kind: 'tool', name: 'forge.list_conversations', outcome: 'ok' });
  const rows = [];
  for await (const row of chainRows(db, acme.id)) rows.push(row);
  t.is(rows.length, 20);
  t.true(rows.every((row) => V7.test(row.id)));
  t.deepEqual([...rows].sort((a, b) => (a.id < b.id ? -1 : 1)).map((r) => r.seq), rows.map((r) => r.seq));
});
