/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded SQLite file). */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, requireKeptDatabase } from '../shared/config.js';
import { connectDatabase } from '../db/connect.js';
import { exclusively, migrateLatest } from '../db/migrate.js';
import { describeDatabaseFailure } from '../db/errors.js';

const USAGE = `usage: npm run migrate

Applies every pending migration to the database of DATABASE_URL (the embedded SQLite file under
DATA_DIR when unset), without starting the server. It takes no options besides --help.`;

// Arguments are checked before any database is opened, as npm run admin does (docs/errors.md):
// a mistyped option must not migrate a database, nor create a SQLite file.
let help = false;
try {
  ({ values: { help = false } } = parseArgs({ args: process.argv.slice(2), options: { help: { type: 'boolean', short: 'h' } }, allowPositionals: false }));
} catch (error) {
  console.error(`error: ${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (help) {
  console.log(USAGE);
  process.exit(0);
}

try {
  const config = loadConfig();
  requireKeptDatabase(config.database);
  const db = connectDatabase(config.database);
  try {
    // In turn with instances starting on the same PostgreSQL, as npm run admin (db/migrate.ts exclusively).
    const applied = await exclusively(db, () => migrateLatest(db));
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
  } finally {
    await db.destroy();
  }
} catch (error) {
  // As the server and the other CLIs: 2 for a configuration error, 1 for a failure (docs/errors.md).
  console.error(error instanceof ConfigError ? `error: invalid configuration: ${error.message}` : `error: migration failed: ${describeDatabaseFailure(error) ?? (error as Error).message}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
