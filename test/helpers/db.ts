/**
 * Every test gets its own database: a new SQLite file, or a new PostgreSQL database on the server
 * TEST_DATABASE_URL names, when it is set. TEST_DATABASES=sqlite|postgres|sqlite,postgres narrows the set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import type { DatabaseConfig } from '../../shared/config.js';
import { connectDatabase, type Db } from '../../db/connect.js';
import { migrateLatest } from '../../db/migrate.js';
import { createPostgresDatabase, databaseUrl, dropDatabase, migratedSqlite, onServer } from './migrated_template.js';
import { until } from './poll.js';

export type DbKind = 'sqlite' | 'postgres';

export function databasesUnderTest(): DbKind[] {
  const available: DbKind[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  const only = process.env.TEST_DATABASES?.split(',').map((s) => s.trim()).filter(Boolean);
  if (!only?.length) return available;
  for (const kind of only) {
    if (kind === 'postgres' && !process.env.TEST_DATABASE_URL) throw new Error('TEST_DATABASES=postgres needs TEST_DATABASE_URL');
    if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`TEST_DATABASES: unknown database ${kind}`);
  }
  return only as DbKind[];
}

export interface TestDatabase {
  kind: DbKind;
  /** What DATABASE_URL would say for this database. */
  url: string;
  config: DatabaseConfig;
  /** Opens a new connection pool on the same database (another "instance"). */
  connect(): Db;
  drop(): Promise<void>;
}

/**
 * An empty database; with `migrated`, one with every migration applied, and with `signingKeys`
 * too the signing keys a first start would make (from a template: test/helpers/migrated_template.ts).
 * Tests of migrating, and of what a first start does, take the empty one.
 */
export async function createTestDatabase(kind: DbKind, options: { migrated?: boolean; signingKeys?: boolean } = {}): Promise<TestDatabase> {
  const template = { signingKeys: options.signingKeys === true };
  if (kind === 'sqlite') return sqliteDatabase((filename) => (options.migrated ? migratedSqlite(filename, template) : Promise.resolve()));
  return postgresDatabase((name) => createPostgresDatabase(name, options.migrated ? template : undefined));
}

/** A new SQLite file in a directory of its own, made by `make` (which may leave it absent: empty). */
async function sqliteDatabase(make: (filename: string) => Promise<void>): Promise<TestDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-test-'));
  const filename = path.join(dir, 'portico.sqlite');
  const config: DatabaseConfig = { kind: 'sqlite', filename };
  const drop = async () => fs.rmSync(dir, { recursive: true, force: true });
  await make(filename).catch(async (error: unknown) => {
    await drop();
    throw error;
  });
  return { kind: 'sqlite', url: `sqlite:${filename}`, config, connect: () => connectDatabase(config), drop };
}

/** A new PostgreSQL database, named `t_…`, made by `make`. */
async function postgresDatabase(make: (name: string) => Promise<void>): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await make(name);
  const url = databaseUrl(name);
  const config: DatabaseConfig = { kind: 'postgres', url };
  return { kind: 'postgres', url, config, connect: () => connectDatabase(config), drop: () => dropDatabase(name) };
}

/**
 * Databases filled once per test file, then copied: the function returned makes a new database
 * holding what `fill` wrote into a migrated one with signing keys (its first call in this process
 * fills that one).
 * For data that cannot be kept across files and runs as the migrated template is, such as the
 * demo dataset, whose rows' times are relative to when it was seeded. Declares a hook that drops
 * the filled original after the file's tests: call it while the test file declares its tests.
 */
export function filledOnce(fill: (db: Db) => Promise<void>): (kind: DbKind) => Promise<TestDatabase> {
  const originals = new Map<DbKind, Promise<TestDatabase>>();
  const original = (kind: DbKind) => {
    let made = originals.get(kind);
    if (!made) {
      made = (async () => {
        const database = await createTestDatabase(kind, { migrated: true, signingKeys: true });
        const db = database.connect();
        try {
          await fill(db);
          // SQLite: everything into the main file, so that copying the file copies the database.
          if (kind === 'sqlite') await db.raw('pragma wal_checkpoint(truncate)');
        } catch (error) {
          await db.destroy();
          await database.drop();
          throw error;
        }
        // PostgreSQL copies a database only while nobody is connected to it.
        await db.destroy();
        return database;
      })();
      originals.set(kind, made);
    }
    return made;
  };
  test.after.always('drop the databases filled once', async () => {
    for (const made of originals.values()) {
      // One that failed to be made failed its tests already, and left nothing.
      const database = await made.catch(() => undefined);
      await database?.drop();
    }
  });
  return async (kind) => {
    const from = await original(kind);
    if (from.config.kind === 'sqlite') {
      const source = from.config.filename;
      return sqliteDatabase(async (filename) => fs.copyFileSync(source, filename));
    }
    return postgresDatabase((name) => onServer(`create database "${name}" template "${new URL(from.url).pathname.slice(1)}"`));
  };
}

/** A migrated database with an open pool, for repository tests. */
export interface MigratedDatabase extends TestDatabase {
  db: Db;
}

export async function createMigratedDatabase(kind: DbKind): Promise<MigratedDatabase> {
  const database = await createTestDatabase(kind, { migrated: true });
  const db = database.connect();
  // Nothing to apply; it would apply what the template lacked.
  await migrateLatest(db);
  return {
    ...database,
    db,
    drop: async () => {
      await db.destroy();
      await database.drop();
    },
  };
}

/**
 * Registers `title [sqlite]` and `title [postgres]` (as configured): the same test on every database.
 */
export function testOnEachDatabase(title: string, body: (t: ExecutionContext, database: MigratedDatabase) => Promise<void>): void {
  for (const kind of databasesUnderTest()) {
    test(`${title} [${kind}]`, async (t) => {
      const database = await createMigratedDatabase(kind);
      try {
        await body(t, database);
      } finally {
        await database.drop();
      }
    });
  }
}

export interface HeldRow {
  /** The holder's transaction: what it writes, another writer commits when the row is released. */
  trx: Knex.Transaction;
  /** True once `n` sessions wait for the row: directly, or queued behind one that does (false after 10 s). */
  waiting(n: number): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * PostgreSQL: one row held FOR UPDATE by a transaction of the test's own, so that calls racing
 * for it are lined up in a chosen order: each call sent after `waiting(n)` of the calls before it
 * queues behind them, and they run in that order once the row is released. `key`: the column
 * that `id` is the value of (audit_heads: `chain`).
 */
export async function holdRow(db: Knex, table: string, id: string, key = 'id'): Promise<HeldRow> {
  const trx = await db.transaction();
  await trx(table).where({ [key]: id }).forUpdate().select(key);
  const holder = await backendOf(trx);
  return {
    trx,
    waiting: (n) => waitingFor(db, holder, n),
    release: async () => {
      await trx.commit();
    },
  };
}

/** PostgreSQL: the backend (pg_backend_pid) a transaction runs on. */
export async function backendOf(trx: Knex.Transaction): Promise<number> {
  return (await trx.raw('select pg_backend_pid() as pid')).rows[0].pid;
}

/**
 * PostgreSQL: true once `n` sessions wait for a lock the backend `holder` holds: directly, or
 * queued behind one that does (a waiter holds the lock's place in the queue); false after 10 s.
 */
export async function waitingFor(db: Knex, holder: number, n = 1): Promise<boolean> {
  const blocked = `with recursive blocked(pid) as (
      select pid from pg_stat_activity where ? = any(pg_blocking_pids(pid))
      union select a.pid from pg_stat_activity a join blocked b on b.pid = any(pg_blocking_pids(a.pid)))
    select count(*)::int as n from blocked`;
  return (await until(10_000, async () => ((await db.raw(blocked, [holder])).rows[0].n >= n ? true : undefined), 20)) ?? false;
}

/** Resolves when `db` sends its next bearer-token lookup (the grant store's read of oidc_payloads) to the database. */
export function tokenLookupSent(db: Knex): Promise<void> {
  return new Promise<void>((resolve) => {
    const watch = (query: { sql: string }) => {
      if (!query.sql.includes('from "oidc_payloads" as "p"')) return;
      db.off('query', watch);
      resolve();
    };
    db.on('query', watch);
  });
}
