/**
 * The SQLite reader (db/sqlite_client.ts ReadRunner): reads issued during one turn of the event
 * loop wait for its end and then run back to back, each with its own statement and values; a
 * kept statement with a bound LIMIT or an equality on a bound value is not planned again at
 * every execution.
 */
import test, { type ExecutionContext } from 'ava';
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '../../helpers/db.js';
import { createTenant } from '../../../db/accounts.js';
import type BetterSqlite3 from 'better-sqlite3';
import { readerOf, readPipeOf } from '../../../db/connect.js';
import { boundValuesAtRunTime } from '../../../db/sqlite_client.js';
import { migrateLatest } from '../../../db/migrate.js';

/** A migrated SQLite file with the tenant acme, dropped when the test ends. */
async function migratedWithAcme(t: ExecutionContext) {
  const database = await createTestDatabase('sqlite');
  const db = database.connect();
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  await migrateLatest(db);
  return { db, acme: await createTenant(db, { slug: 'acme', name: 'Acme' }) };
}

test('reads of one turn run together at its end, each with its own values [sqlite]', async (t) => {
  const { db, acme } = await migratedWithAcme(t);
  const globex = await createTenant(db, { slug: 'globex', name: 'Globex' });
  await db('forge_conversations').insert([
    { id: randomUUID(), tenant_id: acme.id, title: 'a1', created_at: 1, updated_at: 1 },
    { id: randomUUID(), tenant_id: globex.id, title: 'g1', created_at: 2, updated_at: 2 },
  ]);
  const reads = readerOf(db);
  t.not(reads, db, 'a SQLite file has a reader beside the writer');
  await reads('tenants').first(); // the reader's connection is open

  const order: string[] = [];
  reads.on('query', (query: { bindings?: unknown[] }) => order.push(`query ${query.bindings?.[0] === acme.id ? 'acme' : 'globex'}`));
  const titles = (tenantId: string) => reads('forge_conversations').where({ tenant_id: tenantId }).pluck('title');

  // The first read's caller goes on at once; the second read is issued many microtasks later,
  // still in the same turn. Run on their own, the first would have finished long before.
  const first = titles(acme.id).then((rows) => {
    order.push('first answered');
    return rows;
  });
  for (let i = 0; i < 200; i += 1) await Promise.resolve();
  order.push('second issued');
  const second = titles(globex.id);

  t.deepEqual(await Promise.all([first, second]), [['a1'], ['g1']]);
  t.deepEqual(order, ['second issued', 'query acme', 'query globex', 'first answered']);

  // A read issued in a later turn runs in that turn's group.
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(await titles(acme.id), ['a1']);
});

test('a compiled read on the reader\'s pipe joins the turn\'s group, fires knex\'s query event, and fails alone [sqlite]', async (t) => {
  const { db, acme } = await migratedWithAcme(t);
  await db('forge_conversations').insert({ id: randomUUID(), tenant_id: acme.id, title: 'a1', created_at: 1, updated_at: 1 });
  const reads = readerOf(db);
  const pipe = readPipeOf(reads);
  t.truthy(pipe, 'the reader has a pipe');
  t.is(readPipeOf(db), undefined, 'the writer has none: its reads are in transactions or through knex');
  await db.transaction(async (trx) => t.is(readPipeOf(trx), undefined));

  const order: string[] = [];
  reads.on('query', (query: { sql: string }) => order.push(`query ${query.sql.startsWith('select title') ? 'pipe' : 'knex'}`));
  const sql = 'select title from forge_conversations where tenant_id = ?';
  const piped = pipe!.rows<{ title: string }>(sql, [acme.id]).then((rows) => {
    order.push('pipe answered');
    return rows;
  });
  for (let i = 0; i < 50; i += 1) await Promise.resolve();
  order.push('knex issued');
  const viaKnex = reads('forge_conversations').where({ tenant_id: acme.id }).pluck('title');
  t.deepEqual(await Promise.all([piped, viaKnex]), [[{ title: 'a1' }], ['a1']]);
  t.deepEqual(order, ['knex issued', 'query pipe', 'query knex', 'pipe answered']);

  const [bad, good] = await Promise.allSettled([pipe!.rows('select nope from forge_conversations', []), pipe!.rows<{ title: string }>(sql, [acme.id])]);
  t.is(bad.status, 'rejected');
  t.regex((bad as PromiseRejectedResult).reason.message, /^select nope from forge_conversations - no such column: nope/);
  t.deepEqual((good as PromiseFulfilledResult<unknown>).value, [{ title: 'a1' }]);
});

test('a kept statement with a bound LIMIT and a tenant filter is planned once and honours every value, with SQLite\'s own errors [sqlite]', async (t) => {
  const { db, acme } = await migratedWithAcme(t);
  const globex = await createTenant(db, { slug: 'globex', name: 'Globex' });
  await db('forge_conversations').insert([1, 2, 3, 4, 5].map((n) => ({ id: randomUUID(), tenant_id: acme.id, title: `c${n}`, created_at: n, updated_at: n })));
  await db('forge_conversations').insert({ id: randomUUID(), tenant_id: globex.id, title: 'g1', created_at: 9, updated_at: 9 });
  const reads = readerOf(db);
  const pipe = readPipeOf(reads)!;
  const connection = await (reads.client as unknown as { sharedConnection(): Promise<BetterSqlite3.Database> }).sharedConnection();
  // SQLite binds a function into a statement's plan when it plans it. Registering a closer match
  // for planned() afterwards changes what a statement planned again would call, and nothing else:
  // that is how this test sees whether a kept statement is re-planned when its values are bound.
  // SQLite 3.53 (Node 20, 22) re-plans such a statement for its bound LIMIT, 3.54 (Node 24) also
  // for the tenant compared with `=` beside the ORDER BY.
  connection.function('planned', { varargs: true }, () => 'first plan');
  const sql = 'select title, planned() as plan from forge_conversations where tenant_id = ? order by updated_at desc limit ? offset ?';
  const viaKnex = (limit: number) => reads('forge_conversations').select('title', reads.raw('planned() as plan')).where({ tenant_id: acme.id }).orderBy('updated_at', 'desc').limit(limit);
  t.deepEqual((await pipe.rows<{ title: string }>(sql, [acme.id, 2, 0])).map((row) => row.title), ['c5', 'c4']);
  t.deepEqual((await viaKnex(2)).map((row: { title: string }) => row.title), ['c5', 'c4']);
  connection.function('planned', () => 'planned again');

  const pages: Array<[string, unknown, number, string[]]> = [
    [acme.id, 1, 0, ['c5']], [acme.id, 3, 1, ['c4', 'c3', 'c2']], [acme.id, 0, 0, []], [acme.id, -1, 3, ['c2', 'c1']], [acme.id, '2', 0, ['c5', 'c4']], [globex.id, 5, 0, ['g1']],
  ];
  for (const [tenant, limit, offset, titles] of pages) {
    const rows = await pipe.rows<{ title: string; plan: string }>(sql, [tenant, limit, offset]);
    t.deepEqual(rows.map((row) => row.title), titles, `limit ${limit} offset ${offset}`);
    t.true(rows.every((row) => row.plan === 'first plan'), `limit ${limit}: the kept statement ran without being planned again`);
  }
  const rows = (await viaKnex(4)) as Array<{ title: string; plan: string }>;
  t.deepEqual(rows.map((row) => row.title), ['c5', 'c4', 'c3', 'c2']);
  t.true(rows.every((row) => row.plan === 'first plan'), "knex's .where() and .limit() too");

  // A value that is not an integer fails as it does in a LIMIT SQLite plans with; comparisons
  // with `=` find what the statement as written finds (run straight on the connection), whatever
  // the value's type, on INTEGER and TEXT columns alike (the same affinity rules).
  for (const limit of ['abc', 2.5, null]) await t.throwsAsync(pipe.rows(sql, [acme.id, limit, 0]), { any: true, code: 'SQLITE_MISMATCH' }, String(limit));
  await db('forge_conversations').insert({ id: randomUUID(), tenant_id: acme.id, title: '5', created_at: 10, updated_at: 10 });
  for (const column of ['created_at', 'title']) {
    const compare = `select title from forge_conversations where ${column} = ? order by title`;
    for (const value of [10, '10', 5, '5', 10n, 5n, null]) {
      t.deepEqual(await pipe.rows(compare, [value]), connection.prepare(compare).all(value), `${column} = ${String(value)} (${typeof value})`);
    }
  }
  t.is(
    boundValuesAtRunTime('select a from t where b = (select c from u where d = ? limit ?) and e != ? and f <= ? LIMIT ? offset ?'),
    'select a from t where b = (select c from u where d = +? limit +?) and e != +? and f <= +? LIMIT +? offset ?',
  );
  t.is(boundValuesAtRunTime('update h set seq = ?, hash = ? where chain = ?'), 'update h set seq = +?, hash = +? where chain = +?');
  t.is(boundValuesAtRunTime('select a from t where b in (?, ?) limit 5'), 'select a from t where b in (?, ?) limit 5', 'IN lists and literal LIMITs are left as they are');
});
