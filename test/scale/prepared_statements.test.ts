/**
 * Named prepared statements on PostgreSQL (db/pg_client.ts): repeated statements are parsed once
 * per connection; statements whose result columns could change under another instance's
 * migration (`*`) run unnamed, so a rolling deploy that adds a column breaks nothing;
 * DATABASE_PREPARED_STATEMENTS=off turns it off.
 */
import test from 'ava';
import knexFactory, { type Knex } from 'knex';
import { connectDatabase } from '../../db/connect.js';
import { migrateLatest } from '../../db/migrate.js';
import { pgClient, statementNamer } from '../../db/pg_client.js';
import { createTestDatabase, databasesUnderTest, type TestDatabase } from '../helpers/db.js';

test('which statement texts are named: single data statements without a `*` other than count(*)', (t) => {
  const name = statementNamer();
  const named = [
    'select "id", "slug" from "tenants" where "slug" = $1',
    'select count(*) as "n" from "forge_messages" where "tenant_id" = $1',
    'insert into audit_log (id, chain) values ($1, $2)',
    '  UPDATE connections set call_count = call_count + $1 where id = $2',
    'delete from "oidc_payloads" where "id" = $1',
    'with moved as (update audit_heads set seq = $1 returning chain) select count(*) as n from moved',
  ];
  for (const sql of named) t.regex(name(sql) ?? '', /^p_[\w-]{27}$/, sql);
  t.is(name(named[0]), name(named[0]), 'the same text has the same name every time');
  t.not(name(named[0]), name(named[1]));
  const unnamed = [
    'select * from "tenants"',
    'select "forge_conversations".* from "forge_conversations"',
    'insert into "connections" ("id") values ($1) returning *',
    'select 1; select 2',
    'BEGIN;',
    'COMMIT;',
    'create table t (id int)',
    'alter table t add column x int',
    'LISTEN portico_events',
  ];
  for (const sql of unnamed) t.is(name(sql), undefined, sql);
});

test('at most `max` distinct texts are named; the ones named keep their names', (t) => {
  const name = statementNamer(3);
  const first = ['select a from t', 'select b from t', 'select c from t'].map(name);
  t.true(first.every(Boolean));
  t.is(name('select d from t'), undefined);
  t.is(name('select e from t'), undefined);
  t.is(name('select a from t'), first[0]);
});

const postgres = databasesUnderTest().includes('postgres');
const pgTest = postgres ? test : test.skip;

/** The prepared statements of the connection `db` runs on (a pool of one). */
async function prepared(db: Knex): Promise<string[]> {
  // Named itself (no `*`): it shows up in its own answer from the second call on, so filter it out.
  const { rows } = await db.raw<{ rows: Array<{ statement: string }> }>('select statement from pg_prepared_statements where statement not like ?', ['%pg_prepared_statements%']);
  return rows.map((r) => r.statement);
}

async function withTable(work: (database: TestDatabase, db: Knex) => Promise<void>): Promise<void> {
  const database = await createTestDatabase('postgres');
  const db = knexFactory({ client: pgClient({ named: true }), connection: database.url, pool: { min: 1, max: 1 } });
  try {
    await db.raw('create table things (id int primary key, label text)');
    await db('things').insert([{ id: 1, label: 'one' }, { id: 2, label: 'two' }]);
    await work(database, db);
  } finally {
    await db.destroy();
    await database.drop();
  }
}

pgTest('a repeated statement is prepared once on its connection and answers as before; `select *` is not prepared [postgres]', async (t) => {
  await withTable(async (_database, db) => {
    for (let i = 0; i < 3; i += 1) t.deepEqual(await db('things').select('id', 'label').where({ id: 2 }), [{ id: 2, label: 'two' }]);
    t.deepEqual(await db('things').select('*').orderBy('id'), [{ id: 1, label: 'one' }, { id: 2, label: 'two' }]);
    const statements = await prepared(db);
    // Named from its first run (Parse is sent then anyway): the seeding insert too.
    t.deepEqual(statements.filter((s) => s.includes('"things"')).sort(), ['insert into "things" ("id", "label") values ($1, $2), ($3, $4)', 'select "id", "label" from "things" where "id" = $1']);
  });
});

pgTest('another instance adding a column (a rolling migration) breaks neither a prepared statement nor a `select *` [postgres]', async (t) => {
  await withTable(async (database, db) => {
    for (let i = 0; i < 2; i += 1) {
      await db('things').select('id', 'label').where({ id: 1 });
      await db('things').select('*').where({ id: 1 });
    }
    const other = knexFactory({ client: 'pg', connection: database.url, pool: { min: 0, max: 1 } });
    try {
      await other.raw('alter table things add column added_later int default 7');
    } finally {
      await other.destroy();
    }
    t.deepEqual(await db('things').select('id', 'label').where({ id: 1 }), [{ id: 1, label: 'one' }]);
    t.deepEqual(await db('things').select('*').where({ id: 1 }), [{ id: 1, label: 'one', added_later: 7 }]);
  });
});

pgTest('a named `select *` would fail after such a migration: why `*` statements run unnamed [postgres]', async (t) => {
  await withTable(async (database, db) => {
    const query = { text: 'select * from things where id = $1', values: [1], name: 'star' };
    const run = () => db.client.acquireConnection().then(async (connection: { query(q: unknown): Promise<unknown> }) => {
      try {
        return await connection.query(query);
      } finally {
        await db.client.releaseConnection(connection);
      }
    });
    await run();
    const other = knexFactory({ client: 'pg', connection: database.url, pool: { min: 0, max: 1 } });
    try {
      await other.raw('alter table things add column added_later int');
    } finally {
      await other.destroy();
    }
    await t.throwsAsync(run, { message: /cached plan must not change result type/ });
  });
});

pgTest('DATABASE_PREPARED_STATEMENTS=off: nothing is prepared [postgres]', async (t) => {
  const database = await createTestDatabase('postgres');
  const db = connectDatabase({ ...database.config, kind: 'postgres', url: database.url, preparedStatements: false } as typeof database.config);
  try {
    await migrateLatest(db);
    await db.transaction(async (trx) => {
      for (let i = 0; i < 3; i += 1) await trx('tenants').select('id', 'slug').where({ slug: 'acme' });
      t.deepEqual(await prepared(trx as unknown as Knex), []);
    });
  } finally {
    await db.destroy();
    await database.drop();
  }
});

pgTest('the service prepares its hot statements (the default) [postgres]', async (t) => {
  const database = await createTestDatabase('postgres');
  const db = database.connect();
  try {
    await migrateLatest(db);
    await db.transaction(async (trx) => {
      for (let i = 0; i < 2; i += 1) await trx('tenants').select('id', 'slug').where({ slug: 'acme' });
      t.true((await prepared(trx as unknown as Knex)).includes('select "id", "slug" from "tenants" where "slug" = $1'));
    });
  } finally {
    await db.destroy();
    await database.drop();
  }
});
