/**
 * The suite's migrated databases come from a template (test/helpers/migrated_template.ts): a copied
 * SQLite file, or the statements of one PostgreSQL migration run again, with the signing keys a
 * first start makes. Such a database must be the one migrating makes, with those keys and nothing
 * else, or every test on it would test something else.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { loadOrCreateSigningKeys, SIGNING_KEYS } from '../../../auth/keys.js';
import { dialectOf } from '../../../db/connect.js';
import { migrateLatest } from '../../../db/migrate.js';
import { createTestDatabase, databasesUnderTest } from '../../helpers/db.js';

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
