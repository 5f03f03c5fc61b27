/**
 * Opens the database: embedded SQLite (WAL, busy timeout, foreign keys) or PostgreSQL.
 * Every dialect difference of Portico lives in db/.
 */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { DatabaseConfig } from '../shared/config.js';

// PostgreSQL returns int8 as a string by default; our int8 columns are epoch milliseconds and counters.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type Db = Knex;
export type DbOrTrx = Knex | Knex.Transaction;

export function dialectOf(db: DbOrTrx): 'sqlite' | 'postgres' {
  return db.client.config.client === 'pg' ? 'postgres' : 'sqlite';
}

export function connectDatabase(config: DatabaseConfig): Db {
  if (config.kind === 'postgres') {
    return knexFactory({
      client: 'pg',
      connection: config.url,
      searchPath: config.schema ? [config.schema] : undefined,
      pool: { min: 0, max: 10 },
      acquireConnectionTimeout: 10_000,
    });
  }
  if (config.filename !== ':memory:') fs.mkdirSync(path.dirname(config.filename), { recursive: true });
  return knexFactory({
    client: 'sqlite3',
    connection: { filename: config.filename },
    useNullAsDefault: true,
    // node-sqlite3 serialises on one connection anyway; one connection keeps transactions simple.
    pool: {
      min: 1,
      max: 1,
      afterCreate(connection: SqliteConnection, done: (error: Error | null, connection: unknown) => void) {
        connection.exec(
          'PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;',
          (error) => done(error, connection),
        );
      },
    },
    acquireConnectionTimeout: 10_000,
  });
}

interface SqliteConnection {
  exec(sql: string, callback: (error: Error | null) => void): void;
}

/** Cheap round trip for /readyz. */
export async function ping(db: Db): Promise<void> {
  await db.raw('select 1');
}

export interface PoolStats {
  used: number;
  free: number;
  pending: number;
  max: number;
}

export function poolStats(db: Db): PoolStats {
  const pool = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number } }).pool;
  if (!pool) return { used: 0, free: 0, pending: 0, max: 0 };
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires(), max: pool.max };
}
