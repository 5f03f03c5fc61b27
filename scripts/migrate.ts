/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded SQLite file). */
import { ConfigError, loadConfig } from '../shared/config.js';
import { connectDatabase } from '../db/connect.js';
import { migrateLatest } from '../db/migrate.js';

try {
  const config = loadConfig();
  const db = connectDatabase(config.database);
  try {
    const applied = await migrateLatest(db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
  } finally {
    await db.destroy();
  }
} catch (error) {
  // As the server and the other CLIs: 2 for a configuration error, 1 for a failure (docs/errors.md).
  console.error(error instanceof ConfigError ? `error: invalid configuration: ${error.message}` : `error: migration failed: ${(error as Error).message}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
