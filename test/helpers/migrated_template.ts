/**
 * Test databases that start migrated, without migrating each one. Nearly every test starts from a
 * migrated database, and migrating an empty one took ~48 ms on SQLite and ~370 ms on PostgreSQL
 * (23 migrations, ~200 statements, each a round trip). So the first test that needs one migrates an
 * empty database for real and keeps the result in the temporary directory:
 * - SQLite: the migrated file, which later tests copy (~1 ms);
 * - PostgreSQL: every statement the migration ran, its values written in, which later tests run on
 *   their own new schema in one round trip (~260 ms: PostgreSQL's own work for the DDL).
 * A test server's database also gets the signing keys a first start would make (auth/keys.ts):
 * making the RSA key was most of a first start's ~220 ms, against 25 ms for a restart. Each test's
 * database has its own copy of them; its cookie and MAC keys (the MAC key also names its event
 * channel) are still made at its own start.
 *
 * Every worker process finds what the first one kept, under a key of what made it (templateKey): a
 * change to a migration, db/migrate.ts, db/connect.ts, the key code, this file or knex's version
 * makes another key, so a stale template is never used. test/foundation/migrated_template.test.ts
 * checks that a database made this way is the one migrating makes (tables, columns, indexes,
 * constraints, rows), with exactly those keys or none.
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
function templateKey(): string {
  const hash = createHash('sha256').update(KNEX_VERSION);
  for (const file of ['db/migrate.ts', 'db/connect.ts', 'db/secrets.ts', 'auth/keys.ts', 'test/helpers/migrated_template.ts']) hash.update(fs.readFileSync(path.join(ROOT, file)));
  for (const [name] of MIGRATIONS) hash.update(name).update(fs.readFileSync(path.join(ROOT, 'db', 'migrations', `${name}.ts`)));
  return hash.digest('hex').slice(0, 16);
}

const cacheDir = path.join(os.tmpdir(), 'portico-migrated');

/** The kept file for `kind`, made by `make` (into a path of its own) if it is not there yet. */
async function kept(kind: string, make: (into: string) => Promise<void>): Promise<string> {
  const file = path.join(cacheDir, `${kind}-${templateKey()}`);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(cacheDir, { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await make(draft);
    // Atomic: workers making it at the same time each rename a complete file; the last one stays.
    fs.renameSync(draft, file);
  } finally {
    fs.rmSync(draft, { force: true });
  }
  return file;
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

/** Between the migration's statements and those storing the signing keys, in the kept script. */
const KEYS_PART = '\n-- signing keys\n';

/** The kept PostgreSQL script, read once per process: the migration's part and the keys' part. */
let postgresScript: Promise<{ migration: string; keys: string }> | undefined;

/** Migrates the empty schema `url`'s search_path names (and stores signing keys there, if asked) by running the kept script. */
export async function migratedPostgres(url: string, { signingKeys }: Template, fresh: () => Promise<{ url: string; drop(): Promise<void> }>): Promise<void> {
  const { migration, keys } = await (postgresScript ??= kept('postgres', async (into) => {
    const scratch = await fresh();
    const statements: string[] = [];
    const db = connectDatabase({ kind: 'postgres', url: scratch.url });
    db.on('query', (query: { sql: string; bindings?: readonly unknown[] }) => statements.push(withValues(query.sql, query.bindings ?? [])));
    const script = () => statements.splice(0).map((sql) => sql.replace(/;\s*$/, '')).join(';\n');
    try {
      await migrateLatest(db);
      const migration = script();
      await loadOrCreateSigningKeys(db);
      fs.writeFileSync(into, `${migration};${KEYS_PART}${script()}`);
    } finally {
      await db.destroy();
      await scratch.drop();
    }
  }).then((file) => {
    const [migration, keys] = fs.readFileSync(file, 'utf8').split(KEYS_PART);
    return { migration, keys };
  }));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // One simple-protocol query: the statements run in order, in the transactions they ran in.
    await client.query(signingKeys ? `${migration}${KEYS_PART}${keys}` : migration);
  } finally {
    await client.end();
  }
}

/** A statement as knex ran it (`$n` placeholders) with its values written in as literals. */
function withValues(sql: string, bindings: readonly unknown[]): string {
  if (!bindings.length) return sql;
  if (!sql.includes('$1')) throw new Error(`a migration statement with values but no $n placeholders: ${sql}`);
  return sql.replace(/\$(\d+)/g, (_, n: string) => literal(bindings[Number(n) - 1]));
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  const text = value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : JSON.stringify(value);
  // standard_conforming_strings is on (PostgreSQL's default since 9.1): only quotes are doubled.
  return `'${text.replace(/'/g, "''")}'`;
}
