/**
 * PostgreSQL's read pipe (db/pg_client.ts PgPipe): TenantScope's reads outside transactions on
 * one pipelined connection, the reads of one event-loop turn in one write.
 */
import fs from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import test from 'ava';
import { createMigratedDatabase, createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { createTenant } from '../../db/accounts.js';
import { connectDatabase, readPipeOf, type Db } from '../../db/connect.js';
import { translateDbError } from '../../db/errors.js';
import { migrateLatest } from '../../db/migrate.js';
import { TenantScope } from '../../db/tenant_scope.js';

// Serial: the write count is the whole process's, so no other test of this file may run meanwhile.
const onPostgres = databasesUnderTest().includes('postgres') ? test.serial : test.skip;

/** This process's write system calls so far (Linux: /proc/self/io). */
const writeCalls = () => Number(/syscw: (\d+)/.exec(fs.readFileSync('/proc/self/io', 'utf8'))![1]);

const titles = (db: Db, tenantId: string, limit: number) =>
  new TenantScope(db, tenantId).select<{ title: string }>('test.pipe.titles', { limit }, (scope, v) =>
    scope.from('forge_conversations').select('forge_conversations.title').orderBy('forge_conversations.created_at', 'asc').limit(v.limit as number));

/** A migrated database, seen through a second, fresh pool named `app` in pg_stat_activity. */
async function setUp() {
  const migrated = await createMigratedDatabase('postgres');
  const acme = await createTenant(migrated.db, { slug: 'acme', name: 'Acme' });
  const globex = await createTenant(migrated.db, { slug: 'globex', name: 'Globex' });
  await migrated.db('forge_conversations').insert([
    ...['a1', 'a2', 'a3'].map((title, i) => ({ id: randomUUID(), tenant_id: acme.id, title, created_at: i, updated_at: i })),
    { id: randomUUID(), tenant_id: globex.id, title: 'g1', created_at: 0, updated_at: 0 },
  ]);
  const app = `portico_pipe_${randomBytes(4).toString('hex')}`;
  const url = new URL(migrated.url);
  url.searchParams.set('application_name', app);
  const db = connectDatabase({ kind: 'postgres', url: url.href });
  const backends = async () =>
    (await migrated.db.raw('select pid from pg_stat_activity where application_name = ? order by pid', [app])).rows.map((r: { pid: number }) => r.pid) as number[];
  return { migrated, db, acme, globex, app, backends };
}

onPostgres('reads outside a transaction share one connection, each with its own tenant\'s rows, and the pool stays unused [postgres]', async (t) => {
  const { migrated, db, acme, globex, backends } = await setUp();
  try {
    const reads = await Promise.all(Array.from({ length: 30 }, (_, i) => titles(db, i % 2 ? acme.id : globex.id, 2)));
    reads.forEach((rows, i) => t.deepEqual(rows.map((r) => r.title), i % 2 ? ['a1', 'a2'] : ['g1']));
    t.is((await backends()).length, 1, 'thirty reads at once, one backend: the pipe, not ten pooled connections');
    t.deepEqual(await db.transaction(async (trx) => (await titles(trx, acme.id, 1)).map((r) => r.title)), ['a1'], 'inside a transaction the read stays on the transaction');
    t.is(readPipeOf(await db.transaction(async (trx) => trx)), undefined);
  } finally {
    await db.destroy();
    await migrated.drop();
  }
});

onPostgres('the reads of one turn leave in one write; reads a turn apart in one write each [postgres]', async (t) => {
  const { migrated, db, acme } = await setUp();
  try {
    await titles(db, acme.id, 1); // connected, statement prepared
    const inOneTurn = async () => {
      const before = writeCalls();
      await Promise.all(Array.from({ length: 20 }, () => titles(db, acme.id, 1)));
      return writeCalls() - before;
    };
    const turnApart = async () => {
      const before = writeCalls();
      const reads: Array<Promise<unknown>> = [];
      for (let i = 0; i < 20; i += 1) {
        reads.push(titles(db, acme.id, 1));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(reads);
      return writeCalls() - before;
    };
    const together = Math.min(await inOneTurn(), await inOneTurn(), await inOneTurn());
    const apart = Math.min(await turnApart(), await turnApart());
    t.true(together <= 3, `20 reads of one turn: ${together} write calls`);
    t.true(apart >= 20, `20 reads a turn apart: ${apart} write calls (the count sees each write)`);
  } finally {
    await db.destroy();
    await migrated.drop();
  }
});

onPostgres('a failing read fails alone; the reads written with it are answered [postgres]', async (t) => {
  const { migrated, db } = await setUp();
  try {
    const pipe = readPipeOf(db)!;
    const [before, failed, after] = await Promise.allSettled([
      pipe.rows<{ n: number }>('select 1 + ?::int as n', [1]),
      pipe.rows('select 1 / (?::int - 1) as n', [1]),
      pipe.rows<{ n: number }>('select 2 + ?::int as n', [1]),
    ]);
    t.deepEqual(before, { status: 'fulfilled', value: [{ n: 2 }] });
    t.is(failed.status, 'rejected');
    t.is(((failed as PromiseRejectedResult).reason as { code?: string }).code, '22012', 'division by zero, from PostgreSQL');
    t.deepEqual(after, { status: 'fulfilled', value: [{ n: 3 }] });
  } finally {
    await db.destroy();
    await migrated.drop();
  }
});

onPostgres('a terminated connection fails its reads as unavailable, the next read opens another, and closing the database closes it [postgres]', async (t) => {
  const { migrated, db, acme, backends } = await setUp();
  try {
    const pipe = readPipeOf(db)!;
    const [first] = await pipe.rows<{ pid: number }>('select pg_backend_pid() as pid', []);
    const slow = pipe.rows('select pg_sleep(5)', []);
    const behind = pipe.rows('select 1 as n', []);
    // Terminated once PostgreSQL is running the sleep, with the next read written behind it.
    const sleeping = async () => (await migrated.db.raw("select count(*)::int as n from pg_stat_activity where pid = ? and state = 'active' and query like '%pg_sleep%'", [first.pid])).rows[0].n === 1;
    for (const deadline = Date.now() + 10_000; !(await sleeping()) && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 10));
    await migrated.db.raw('select pg_terminate_backend(?)', [first.pid]);
    for (const read of [slow, behind]) {
      const error = await t.throwsAsync(read);
      t.is(translateDbError(error).code, 'unavailable', String(error?.message));
    }
    t.deepEqual((await titles(db, acme.id, 3)).map((r) => r.title), ['a1', 'a2', 'a3'], 'the next read is served');
    const [second] = await pipe.rows<{ pid: number }>('select pg_backend_pid() as pid', []);
    t.not(second.pid, first.pid);
    t.deepEqual(await backends(), [second.pid]);
    await db.destroy();
    t.deepEqual(await backends(), [], 'closed with the database');
  } finally {
    await db.destroy().catch(() => undefined);
    await migrated.drop();
  }
});

onPostgres('with prepared statements off the pipe reads unnamed; with them on it prepares once per connection [postgres]', async (t) => {
  const base = await createTestDatabase('postgres');
  const named = connectDatabase(base.config);
  const unnamed = connectDatabase({ kind: 'postgres', url: base.url, preparedStatements: false });
  try {
    await migrateLatest(named);
    const tenant = await createTenant(named, { slug: 'acme', name: 'Acme' });
    const prepared = async (db: Db) => {
      await Promise.all([titles(db, tenant.id, 1), titles(db, tenant.id, 2)]);
      await titles(db, tenant.id, 3);
      return readPipeOf(db)!.rows<{ n: number }>("select count(*)::int as n from pg_prepared_statements where statement like '%forge_conversations%' and statement not like '%pg_prepared_statements%'", []);
    };
    t.deepEqual(await prepared(named), [{ n: 1 }]);
    t.deepEqual(await prepared(unnamed), [{ n: 0 }]);
  } finally {
    await named.destroy();
    await unnamed.destroy();
    await base.drop();
  }
});

onPostgres('a read running past DATABASE_READ_TIMEOUT_MS is cancelled as a time-out, and the read written behind it is answered at once [postgres]', async (t) => {
  const base = await createTestDatabase('postgres');
  const db = connectDatabase({ kind: 'postgres', url: base.url, readTimeoutMs: 200 });
  try {
    const pipe = readPipeOf(db)!;
    const started = Date.now();
    const [slow, behind] = await Promise.allSettled([pipe.rows('select pg_sleep(5)', []), pipe.rows<{ n: number }>('select 1 as n', [])]);
    t.is(slow.status, 'rejected');
    const error = (slow as PromiseRejectedResult).reason as { code?: string };
    t.is(error.code, '57014', 'PostgreSQL cancelled it (statement_timeout)');
    t.is(translateDbError(error).code, 'timeout');
    t.deepEqual(behind, { status: 'fulfilled', value: [{ n: 1 }] });
    t.true(Date.now() - started < 4_000, 'the read behind did not wait for the 5 s sleep');
    t.deepEqual(await pipe.rows<{ n: number }>('select 2 as n', []), [{ n: 2 }], 'the pipe goes on serving');
  } finally {
    await db.destroy();
    await base.drop();
  }
});
