/**
 * Migrated test databases without migrating each one. Nearly every test starts from a migrated
 * database, and migrating an empty one took ~48 ms on SQLite and ~370 ms on PostgreSQL (23
 * migrations, ~200 statements, each a round trip); from the template it takes ~1 ms and ~260 ms
 * (PostgreSQL's own work for the DDL is most of that). So the first test that needs one migrates an empty database for real
 * and keeps what that produced in the temporary directory, keyed by the migrations' sources:
 * - SQLite: the migrated file, which later tests copy;
 * - PostgreSQL: every statement the migration ran, its values written in, which later tests run on
 *   their own new schema in one round trip.
 * Every worker process finds what the first one kept. A change to a migration (or to db/migrate.ts,
 * db/connect.ts, or another knex) makes another key, so a stale template is never used.
 * test/foundation/migrated_template.test.ts checks that a database made this way is the one a
 * migration makes: tables, columns, indexes, constraints, rows.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import { connectDatabase } from '../../db/connect.js';
import { MIGRATIONS, migrateLatest } from '../../db/migrate.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const KNEX_VERSION = (createRequire(import.meta.url)('knex/package.json') as { version: string }).version;

/** What the migrations are: their names and sources, the runner's and the connection's (SQLite's pragmas), and knex's version. */
function migrationsKey(): string {
  const hash = createHash('sha256').update(KNEX_VERSION);
  for (const file of ['migrate.ts', 'connect.ts']) hash.update(fs.readFileSync(path.join(ROOT, 'db', file)));
  for (const [name] of MIGRATIONS) hash.update(name).update(fs.readFileSync(path.join(ROOT, 'db', 'migrations', `${name}.ts`)));
  return hash.digest('hex').slice(0, 16);
}

const cacheDir = path.join(os.tmpdir(), 'portico-migrated');

/** The kept file for `kind`, made by `make` (into a path of its own) if it is not there yet. */
async function kept(kind: string, make: (into: string) => Promise<void>): Promise<string> {
  const file = path.join(cacheDir, `${kind}-${migrationsKey()}`);
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

let sqliteTemplate: Promise<string> | undefined;

/** Makes `filename` a migrated SQLite database. */
export async function migratedSqlite(filename: string): Promise<void> {
  const template = await (sqliteTemplate ??= kept('sqlite', async (into) => {
    const db = connectDatabase({ kind: 'sqlite', filename: into });
    try {
      await migrateLatest(db);
      // Everything into the main file, so that the file alone is the database.
      await db.raw('pragma wal_checkpoint(truncate)');
    } finally {
      await db.destroy();
    }
    for (const suffix of ['-wal', '-shm']) fs.rmSync(`${into}${suffix}`, { force: true });
  }));
  fs.copyFileSync(template, filename);
}

let postgresScript: Promise<string> | undefined;

/** Migrates the empty schema `url`'s search_path names, by running the kept script there. */
export async function migratedPostgres(url: string, fresh: () => Promise<{ url: string; drop(): Promise<void> }>): Promise<void> {
  const script = fs.readFileSync(await (postgresScript ??= kept('postgres', async (into) => {
    const scratch = await fresh();
    const statements: string[] = [];
    const db = connectDatabase({ kind: 'postgres', url: scratch.url });
    db.on('query', (query: { sql: string; bindings?: readonly unknown[] }) => statements.push(withValues(query.sql, query.bindings ?? [])));
    try {
      await migrateLatest(db);
    } finally {
      await db.destroy();
      await scratch.drop();
    }
    fs.writeFileSync(into, statements.map((sql) => sql.replace(/;\s*$/, '')).join(';\n'));
  })), 'utf8');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // One simple-protocol query: the statements run in order, in the transactions they ran in.
    await client.query(script);
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
