/**
 * Migrations are listed here, in order, rather than found on disk: the same list works from
 * TypeScript sources (tests) and from the compiled dist/ (npm start). Add new files at the end.
 */
import type { Knex } from 'knex';
import type pg from 'pg';
import { dialectOf, type Db } from './connect.js';
import { sessionClient, useSearchPath } from './pg_client.js';
import * as accounts from './migrations/20261121_0001_accounts.js';
import * as oauthStore from './migrations/20261121_0002_oauth_store.js';
import * as audit from './migrations/20261121_0003_audit.js';
import * as auth from './migrations/20261121_0004_auth.js';
import * as mcp from './migrations/20261121_0005_mcp.js';
import * as forge from './migrations/20261121_0006_forge.js';
import * as cavalier from './migrations/20261121_0007_cavalier.js';
import * as aegis from './migrations/20261121_0008_aegis.js';
import * as harvest from './migrations/20261121_0009_harvest.js';
import * as reclaim from './migrations/20261121_0010_reclaim.js';
import * as herald from './migrations/20261121_0011_herald.js';
import * as terrain from './migrations/20261121_0012_terrain.js';
import * as people from './migrations/20261121_0013_people.js';
import * as pawvault from './migrations/20261121_0014_pawvault.js';
import * as midas from './migrations/20261121_0015_midas.js';
import * as surfaces from './migrations/20261121_0016_surfaces.js';
import * as forgeKeysetIndexes from './migrations/20261122_0017_forge_keyset_indexes.js';
import * as consoleSessions from './migrations/20261123_0018_console_sessions.js';
import * as tenantSuspension from './migrations/20261124_0019_tenant_suspension.js';
import * as userDisable from './migrations/20261124_0020_user_disable.js';
import * as instances from './migrations/20261124_0021_instances.js';
import * as harvestSearchText from './migrations/20261124_0022_harvest_search_text.js';
import * as refreshAnswers from './migrations/20261125_0023_refresh_answers.js';
import * as pawvaultVaccineKey from './migrations/20261126_0024_pawvault_vaccine_key.js';
import * as reclaimRetentionSegments from './migrations/20261126_0025_reclaim_retention_segments.js';
import * as forgeConversationsCreatedIdx from './migrations/20261127_0026_forge_conversations_created_idx.js';
import * as terrainWorkflowNameKey from './migrations/20261127_0027_terrain_workflow_name_key.js';
import * as pawvaultVaccineFoldedKey from './migrations/20261128_0028_pawvault_vaccine_folded_key.js';
import * as nameKeys from './migrations/20261129_0029_name_keys.js';
import * as keysetListingIndexes from './migrations/20261130_0030_keyset_listing_indexes.js';
import * as filteredListingIndexes from './migrations/20261130_0031_filtered_listing_indexes.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export const MIGRATIONS: ReadonlyArray<[name: string, migration: Migration]> = [
  ['20261121_0001_accounts', accounts],
  ['20261121_0002_oauth_store', oauthStore],
  ['20261121_0003_audit', audit],
  ['20261121_0004_auth', auth],
  ['20261121_0005_mcp', mcp],
  ['20261121_0006_forge', forge],
  ['20261121_0007_cavalier', cavalier],
  ['20261121_0008_aegis', aegis],
  ['20261121_0009_harvest', harvest],
  ['20261121_0010_reclaim', reclaim],
  ['20261121_0011_herald', herald],
  ['20261121_0012_terrain', terrain],
  ['20261121_0013_people', people],
  ['20261121_0014_pawvault', pawvault],
  ['20261121_0015_midas', midas],
  ['20261121_0016_surfaces', surfaces],
  ['20261122_0017_forge_keyset_indexes', forgeKeysetIndexes],
  ['20261123_0018_console_sessions', consoleSessions],
  ['20261124_0019_tenant_suspension', tenantSuspension],
  ['20261124_0020_user_disable', userDisable],
  ['20261124_0021_instances', instances],
  ['20261124_0022_harvest_search_text', harvestSearchText],
  ['20261125_0023_refresh_answers', refreshAnswers],
  ['20261126_0024_pawvault_vaccine_key', pawvaultVaccineKey],
  ['20261126_0025_reclaim_retention_segments', reclaimRetentionSegments],
  ['20261127_0026_forge_conversations_created_idx', forgeConversationsCreatedIdx],
  ['20261127_0027_terrain_workflow_name_key', terrainWorkflowNameKey],
  ['20261128_0028_pawvault_vaccine_folded_key', pawvaultVaccineFoldedKey],
  ['20261129_0029_name_keys', nameKeys],
  ['20261130_0030_keyset_listing_indexes', keysetListingIndexes],
  ['20261130_0031_filtered_listing_indexes', filteredListingIndexes],
];

const source: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};

/**
 * The database was migrated by a later Portico than this one (a deployment rolled back, an older
 * instance restarted): knex would call that a "corrupt migration directory". Nothing is applied.
 */
export class SchemaAheadError extends Error {
  constructor(readonly unknown: string[]) {
    super(
      `the database was migrated by a newer version of Portico (migrations unknown to this one: ${unknown.join(', ')}); `
      + 'run that version or a later one, or restore a backup taken before the upgrade',
    );
    this.name = 'SchemaAheadError';
  }
}

/** Applies every pending migration; returns the names applied. Refuses a database migrated by a newer Portico (SchemaAheadError). */
export async function migrateLatest(db: Db): Promise<string[]> {
  if (await db.schema.hasTable('knex_migrations')) {
    const known = new Set(MIGRATIONS.map(([name]) => name));
    const unknown = (await db('knex_migrations').orderBy('id').select('name')).map((row: { name: string }) => row.name).filter((name) => !known.has(name));
    if (unknown.length) throw new SchemaAheadError(unknown);
  }
  try {
    const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]];
    return applied;
  } catch (error) {
    // knex keeps only the text of why its lock failed, the failed SQL statement first.
    if ((error as Error).name !== 'MigrationLocked') throw error;
    const held = /already locked/.test((error as Error).message);
    throw new Error(held
      ? 'another process is migrating this database (knex_migrations_lock is set); try again once it has finished'
      : 'the database refused the migration lock (knex_migrations_lock): it is read-only, or the user of DATABASE_URL may not write to it', { cause: error });
  }
}

/**
 * Runs `work` while no other Portico on the same PostgreSQL database and schema runs its own:
 * instances started together would otherwise race to create knex's migration table and to seed
 * the demo, and one of them would fail to start. The lock is PostgreSQL's advisory lock, held by a
 * session of its own, so ending that session releases it whatever happens to `work`. SQLite takes
 * its writers one at a time by itself.
 *
 * `signal` aborted while waiting for the turn withdraws the request and rejects with its reason
 * (a start stopped by SIGTERM does not wait for another instance's migrations); once the turn is
 * taken, `work` runs to its end.
 */
export async function exclusively<T>(db: Db, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  if (dialectOf(db) !== 'postgres') return work();
  signal?.throwIfAborted();
  const session = sessionClient(db);
  session.on('error', () => undefined); // a lost session releases the lock; `work` goes on without it
  await session.connect();
  try {
    await useSearchPath(session, db);
    await takeTurn(session, db, signal);
    return await work();
  } finally {
    await session.end().catch(() => undefined);
  }
}

async function takeTurn(session: pg.Client, db: Db, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  const { rows: [{ pid }] } = await session.query<{ pid: number }>('select pg_backend_pid() as pid');
  // Cancelled, not disconnected: a backend waiting for a lock would not notice its client leaving,
  // and would stay in the queue, taking the turn when it comes and only then finding no one there.
  const withdraw = () => void db.raw('select pg_cancel_backend(?)', [pid]).catch(() => undefined);
  signal?.addEventListener('abort', withdraw, { once: true });
  try {
    await session.query(`select pg_advisory_lock(hashtext('portico.start ' || current_schema()))`);
  } catch (error) {
    signal?.throwIfAborted();
    throw error;
  } finally {
    signal?.removeEventListener('abort', withdraw);
  }
}
