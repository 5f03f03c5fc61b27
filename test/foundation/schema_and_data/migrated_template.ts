/**
 * The suite's migrated databases come from a template (test/helpers/migrated_template.ts): a copied
 * SQLite file, or the statements of one PostgreSQL migration run again, with the signing keys a
 * first start makes. Such a database must be the one migrating makes, with those keys and nothing
 * else, or every test on it would test something else. What a change of the template's key leaves
 * behind is removed once nobody used it for a day.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { Knex } from 'knex';
import pg from 'pg';
import { loadOrCreateSigningKeys, SIGNING_KEYS } from '../../../auth/keys.js';
import { dialectOf } from '../../../db/connect.js';
import { migrateLatest } from '../../../db/migrate.js';
import { createTestDatabase, databasesUnderTest } from '../../helpers/db.js';
import { onServer, pruneDatabases, pruneKeptFiles, STALE_MS, templateKey } from '../../helpers/migrated_template.js';

/** Everything migrating decides, in a form two databases of one kind can be compared by. */
async function describe(db: Knex): Promise<Record<string, unknown>> {
  // PostgreSQL answers a raw query with { rows }, SQLite with the rows themselves.
  const rowsOf = async (sql: string) => {
    const result = await db.raw(sql);
    return (result as { rows?: unknown[] }).rows ?? result;
  };
  const tables: string[] = dialectOf(db) === 'postgres'
    ? (await rowsOf(`select table_name as name from information_schema.tables where table_schema = current_schema() order by 1`) as Array<{ name: string }>).map((r) => r.name)
    : (await rowsOf(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by 1`) as Array<{ name: string }>).map((r) => r.name);
  const rows: Record<string, unknown> = {};
  for (const table of tables) {
    // The signing keys are the template's own (checked below); the time each migration ran differs.
    if (table === 'secrets') continue;
    const columns = table === 'knex_migrations' ? ['id', 'name', 'batch'] : ['*'];
    rows[table] = await db(table).select(columns).orderByRaw('1');
  }
  if (dialectOf(db) === 'sqlite') {
    return { objects: await rowsOf(`select type, name, tbl_name, sql from sqlite_master where name not like 'sqlite_%' order by type, name`), rows };
  }
  // Definitions name the schema (`ON t_…​.table`): each database's own is left out.
  const unqualified = (column: string) => `replace(${column}, current_schema() || '.', '')`;
  return {
    columns: await rowsOf(`select table_name, column_name, ordinal_position, data_type, is_nullable, ${unqualified('column_default')} as column_default
      from information_schema.columns where table_schema = current_schema() order by 1, 3`),
    indexes: await rowsOf(`select tablename, indexname, ${unqualified('indexdef')} as indexdef from pg_indexes where schemaname = current_schema() order by 1, 2`),
    constraints: await rowsOf(`select c.conrelid::regclass::text as relation, c.conname, pg_get_constraintdef(c.oid) as definition
      from pg_constraint c where c.connamespace = current_schema()::regnamespace order by 1, 2`),
    sequences: await rowsOf(`select sequencename, last_value from pg_sequences where schemaname = current_schema() order by 1`),
    triggers: await rowsOf(`select event_object_table, trigger_name, action_statement from information_schema.triggers where trigger_schema = current_schema() order by 1, 2`),
    functions: await rowsOf(`select proname, pg_get_function_identity_arguments(oid) as arguments from pg_proc where pronamespace = current_schema()::regnamespace order by 1, 2`),
    rows,
  };
}

for (const kind of databasesUnderTest()) {
  test(`a database made from the migrated template is the one migrating an empty database makes, with signing keys [${kind}]`, async (t) => {
    const migrated = await createTestDatabase(kind);
    const templated = await createTestDatabase(kind, { migrated: true, signingKeys: true });
    const [a, b] = [migrated.connect(), templated.connect()];
    try {
      t.true((await migrateLatest(a)).length > 20, 'the empty database was migrated here');
      t.deepEqual(await migrateLatest(b), [], 'nothing is left to apply on the template');
      const expected = await describe(a);
      t.true(Object.keys(expected.rows as object).length > 30, 'the description covers the tables');
      t.deepEqual(await describe(b), expected);
      t.deepEqual(await a('secrets').pluck('name'), [], 'migrating stores no secret');
      // The one secret the template adds: the signing keys a first start makes, one per algorithm, all current.
      t.deepEqual(await b('secrets').pluck('name'), [SIGNING_KEYS.name]);
      const ring = await loadOrCreateSigningKeys(b);
      t.deepEqual(ring.current.map((key) => key.alg).sort(), ['ES256', 'RS256']);
      t.deepEqual([ring.next.length, ring.previous.length], [0, 0]);
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
      await Promise.all([migrated.drop(), templated.drop()]);
    }
  });
}

for (const kind of databasesUnderTest()) {
  test(`a database made from the migrated template without signing keys holds no secret [${kind}]`, async (t) => {
    const database = await createTestDatabase(kind, { migrated: true });
    const db = database.connect();
    try {
      t.deepEqual(await migrateLatest(db), []);
      t.deepEqual(await db('secrets').pluck('name'), []);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
}

const HOUR = 60 * 60 * 1000;
/** A template key that is not this code's. */
const otherKey = () => randomBytes(8).toString('hex');

test('kept template files of another key are removed once unused for a day; this key\'s, and recently used ones, stay', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-prune-'));
  try {
    const [old, recent, key] = [otherKey(), otherKey(), templateKey()];
    const files: Record<string, number> = {
      [`sqlite-${old}`]: Date.now() - 2 * STALE_MS,
      [`sqlite-keys-${old}.4242.0a0b0c0d`]: Date.now() - 2 * STALE_MS, // a killed maker's draft
      [`used-portico_template_${old}`]: Date.now() - 2 * STALE_MS,
      [`sqlite-keys-${recent}`]: Date.now() - HOUR,
      [`sqlite-${key}`]: Date.now() - 2 * STALE_MS,
    };
    for (const [name, time] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, name), '');
      fs.utimesSync(path.join(dir, name), new Date(time), new Date(time));
    }
    pruneKeptFiles({ dir });
    t.deepEqual(fs.readdirSync(dir).sort(), [`sqlite-${key}`, `sqlite-keys-${recent}`].sort());
    pruneKeptFiles({ dir, now: Date.now() + 2 * STALE_MS });
    t.deepEqual(fs.readdirSync(dir), [`sqlite-${key}`], 'this key\'s file stays, however old');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

if (databasesUnderTest().includes('postgres')) {
  test('template and test databases of another key are dropped once unused for a day; one in use or marked used stays [postgres]', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-prune-'));
    const stale = `portico_template_${otherKey()}`;
    const marked = `portico_template_${otherKey()}_keys`;
    const leaked = `t_${randomBytes(6).toString('hex')}`;
    const inUse = `t_${randomBytes(6).toString('hex')}`;
    const names = [stale, marked, leaked, inUse];
    for (const name of names) await onServer(`create database "${name}" template template0`);
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    const on = new URL(process.env.TEST_DATABASE_URL!);
    on.pathname = `/${inUse}`;
    const user = new pg.Client({ connectionString: on.href });
    await Promise.all([client.connect(), user.connect()]);
    const present = async () => (await client.query('select datname from pg_database where datname = any($1) order by 1', [names])).rows.map((r) => r.datname as string);
    try {
      // A day from now, the mark says `marked` was used an hour before.
      const later = Date.now() + 2 * STALE_MS;
      fs.writeFileSync(path.join(dir, `used-${marked}`), '');
      fs.utimesSync(path.join(dir, `used-${marked}`), new Date(later - HOUR), new Date(later - HOUR));

      await pruneDatabases(client, { dir, among: names });
      t.deepEqual(await present(), [...names].sort(), 'made just now: nothing is stale yet');
      await pruneDatabases(client, { dir, among: names, now: later });
      t.deepEqual(await present(), [marked, inUse].sort(), 'the stale template and the leaked test database are gone');
      await user.end();
      await pruneDatabases(client, { dir, among: names, now: later });
      t.deepEqual(await present(), [marked], 'the test database goes once nobody is on it');
    } finally {
      await user.end().catch(() => undefined);
      await client.end();
      for (const name of names) await onServer(`drop database if exists "${name}" with (force)`);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
