/**
 * Test databases that start migrated, without migrating each one. Nearly every test starts from a
 * migrated database, and migrating an empty one took ~48 ms on SQLite and ~370 ms on PostgreSQL
 * (23 migrations, ~240 statements of DDL). So the first test that needs one migrates an empty
 * database for real and keeps the result:
 * - SQLite: the migrated file in the temporary directory, which later tests copy (~1 ms);
 * - PostgreSQL: a template database on the server, which later tests' databases are made as copies
 *   of (`create database … template`, 55-135 ms, nearly all of it PostgreSQL's CPU; a drop uses little).
 *   Session 35 measured this against the schema per test it replaced: 260-360 ms for the
 *   migration's DDL run again on each new schema, 50-95 ms to drop it (docs/performance.md item 36).
 * A test server's database also gets the signing keys a first start would make (auth/keys.ts):
 * making the RSA key was most of a first start's ~220 ms, against 25 ms for a restart. Each test's
 * database has its own copy of them; its cookie and MAC keys (the MAC key also names its event
 * channel) are still made at its own start.
 *
 * Every worker process, and every later run, finds what the first one kept, under a key of what
 * made it (templateKey): a change to a migration, db/migrate.ts, db/connect.ts, the key code, this
 * file or knex's version makes another key, so a stale template is never used. A process that
 * makes a new template also removes other keys' templates, and test databases left by killed
 * runs, once nobody has used them for a day (STALE_MS).
 * test/foundation/schema_and_data/migrated_template.ts checks that a database made this way is
 * the one migrating makes (tables, columns, indexes, constraints, rows), with exactly those keys
 * or none.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import { connectDatabase } from '../../db/connect.js';
import { MIGRATIONS, migrateLatest } from '../../db/migrate.js';
import { loadOrCreateSigningKeys } from '../../auth/keys.js';
import { PROJECT_ROOT as ROOT } from '../../scripts/project_root.js';

const KNEX_VERSION = (createRequire(import.meta.url)('knex/package.json') as { version: string }).version;

/** What the template is made by: the migrations' names and sources, the runner's, the connection's (SQLite's pragmas), the keys', this file's, and knex's version. */
export function templateKey(): string {
  const hash = createHash('sha256').update(KNEX_VERSION);
  for (const file of ['db/migrate.ts', 'db/connect.ts', 'db/secrets.ts', 'auth/keys.ts', 'test/helpers/migrated_template.ts']) hash.update(fs.readFileSync(path.join(ROOT, file)));
  for (const [name] of MIGRATIONS) hash.update(name).update(fs.readFileSync(path.join(ROOT, 'db', 'migrations', `${name}.ts`)));
  return hash.digest('hex').slice(0, 16);
}

const cacheDir = path.join(os.tmpdir(), 'portico-migrated');

/**
 * What a change to the key leaves behind (the templates of the code before it, a draft of a
 * process that was killed, a test's database whose process was) is removed once it has not been
 * used for this long: long enough that another checkout's run, with templates of its own key,
 * never loses one it is using.
 */
export const STALE_MS = 24 * 60 * 60 * 1000;

/** Marks `file` used now: its modification time is when it was last used. */
function markUsed(file: string): void {
  const now = new Date();
  try {
    fs.utimesSync(file, now, now);
  } catch {
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(file, '');
  }
}

/** The kept file for `kind`, made by `make` (into a path of its own) if it is not there yet. */
async function kept(kind: string, make: (into: string) => Promise<void>): Promise<string> {
  const file = path.join(cacheDir, `${kind}-${templateKey()}`);
  if (fs.existsSync(file)) {
    markUsed(file);
    return file;
  }
  fs.mkdirSync(cacheDir, { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await make(draft);
    // Atomic: workers making it at the same time each rename a complete file; the last one stays.
    fs.renameSync(draft, file);
  } finally {
    fs.rmSync(draft, { force: true });
  }
  pruneKeptFiles();
  return file;
}

/** When to prune, and where (a test's own directory; `now` in the future, to find its files stale). */
export interface PruneOptions {
  now?: number;
  dir?: string;
}

/** Removes the kept files (and drafts, and PostgreSQL templates' use marks) of other keys that nobody used for STALE_MS. */
export function pruneKeptFiles({ now = Date.now(), dir = cacheDir }: PruneOptions = {}): void {
  const key = templateKey();
  for (const name of fs.readdirSync(dir)) {
    if (name.includes(key)) continue;
    const file = path.join(dir, name);
    try {
      if (now - fs.statSync(file).mtimeMs > STALE_MS) fs.rmSync(file, { force: true });
    } catch {
      // Another process removed it first.
    }
  }
}

/** What a test's database starts as: migrated, and with `signingKeys` the keys a first start would make. */
export interface Template {
  signingKeys: boolean;
}

const sqliteTemplates = new Map<boolean, Promise<string>>();

/** The kept SQLite file: migrated, and with `signingKeys` a copy of that with the keys stored. */
function sqliteTemplate(signingKeys: boolean): Promise<string> {
  let template = sqliteTemplates.get(signingKeys);
  if (!template) {
    template = kept(signingKeys ? 'sqlite-keys' : 'sqlite', async (into) => {
      if (signingKeys) fs.copyFileSync(await sqliteTemplate(false), into);
      const db = connectDatabase({ kind: 'sqlite', filename: into });
      try {
        if (signingKeys) await loadOrCreateSigningKeys(db);
        else await migrateLatest(db);
        // Everything into the main file, so that the file alone is the database.
        await db.raw('pragma wal_checkpoint(truncate)');
      } finally {
        await db.destroy();
      }
      for (const suffix of ['-wal', '-shm']) fs.rmSync(`${into}${suffix}`, { force: true });
    });
    sqliteTemplates.set(signingKeys, template);
  }
  return template;
}

/** Makes `filename` a migrated SQLite database (with signing keys, if asked). */
export async function migratedSqlite(filename: string, { signingKeys }: Template): Promise<void> {
  fs.copyFileSync(await sqliteTemplate(signingKeys), filename);
}

/** Runs one statement on the server's maintenance connection: the database TEST_DATABASE_URL names. */
export async function onServer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `url` (TEST_DATABASE_URL) naming the database `name` instead. */
export function databaseUrl(name: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.href;
}

/** Drops the database `name`, ending any session still on it (a test's pool it did not close). */
export function dropDatabase(name: string): Promise<void> {
  return onServer(`drop database if exists "${name}" with (force)`);
}

const postgresTemplates = new Map<boolean, Promise<string>>();

/**
 * The name of the kept PostgreSQL template database: migrated, and with `signingKeys` a copy of
 * that with the keys stored. The first worker to need it makes it under a draft name and renames
 * it; a worker that lost the race drops its draft and uses the winner's. Nobody connects to a
 * template once it has its name: PostgreSQL copies a database only while no session is on it.
 */
function postgresTemplate(signingKeys: boolean): Promise<string> {
  let template = postgresTemplates.get(signingKeys);
  if (!template) {
    template = (async () => {
      const name = `portico_template_${templateKey()}${signingKeys ? '_keys' : ''}`;
      const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await client.connect();
      try {
        const found = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (found.rowCount) {
          markUsed(path.join(cacheDir, `used-${name}`));
          return name;
        }
        const draft = `${name}_${randomBytes(4).toString('hex')}`;
        await client.query(`create database "${draft}" template "${signingKeys ? await postgresTemplate(false) : 'template0'}"`);
        try {
          const db = connectDatabase({ kind: 'postgres', url: databaseUrl(draft) });
          try {
            if (signingKeys) await loadOrCreateSigningKeys(db);
            else await migrateLatest(db);
          } finally {
            await db.destroy();
          }
          await client.query(`alter database "${draft}" rename to "${name}"`);
        } catch (error) {
          await client.query(`drop database if exists "${draft}" with (force)`);
          // 42P04 duplicate_database: another worker named its template first.
          if ((error as { code?: string }).code !== '42P04') throw error;
        }
        markUsed(path.join(cacheDir, `used-${name}`));
        if (!signingKeys) await pruneDatabases(client);
        return name;
      } finally {
        await client.end();
      }
    })();
    postgresTemplates.set(signingKeys, template);
  }
  return template;
}

/**
 * Drops what other keys' runs left on the server once nobody used it for STALE_MS: their
 * templates, drafts of a template, and test databases (`t_…`) whose process was killed before it
 * dropped them. A template's last use is its mark in the cache directory, or for one made on
 * another machine, when its directory last changed; a test database's is when its directory last
 * changed. Needs a superuser (pg_stat_file); without one nothing is dropped.
 */
export async function pruneDatabases(client: pg.Client, { now = Date.now(), dir = cacheDir, among }: PruneOptions & { among?: string[] } = {}): Promise<void> {
  const key = templateKey();
  let rows: { datname: string; modified: Date }[];
  try {
    ({ rows } = await client.query(
      `select datname, (pg_stat_file('base/' || oid)).modification as modified from pg_database d
        where ((datname ~ '^portico_template_[0-9a-f]{16}' and datname not like $1) or datname ~ '^t_[0-9a-f]{12}$')
          and not exists (select 1 from pg_stat_activity a where a.datname = d.datname)`,
      [`portico_template_${key}%`],
    ));
  } catch {
    return;
  }
  for (const { datname, modified } of rows) {
    if (among && !among.includes(datname)) continue;
    let used = modified.getTime();
    try {
      used = Math.max(used, fs.statSync(path.join(dir, `used-${datname}`)).mtimeMs);
    } catch {
      // Made on another machine, or its mark was removed: its directory's time stands.
    }
    if (now - used <= STALE_MS) continue;
    // Without FORCE: a database someone came onto since stays (PostgreSQL waits up to 5 s for them to leave).
    await client.query(`drop database if exists "${datname}"`).catch(() => undefined);
  }
}

/** Makes the database `name`: empty, or migrated (with signing keys, if asked) as a copy of the kept template. */
export async function createPostgresDatabase(name: string, template: Template | undefined): Promise<void> {
  await onServer(`create database "${name}" template "${template ? await postgresTemplate(template.signingKeys) : 'template0'}"`);
}
