/**
 * `npm run migrate` beside instances starting on the same PostgreSQL (a deployment's migration job
 * run while the replicas come up). README: "Instances started together on one PostgreSQL take turns
 * to migrate ... (an advisory lock; the operator CLI takes its turn too)"; DESIGN.md §1: schema
 * changes are "applied on start and by npm run migrate". knex alone does not make two migrating
 * processes safe on a new database: both can find its migration tables missing and create them,
 * one failing, and both can insert the lock table's row, after which knex refuses every later
 * migration ("Migration table is already locked") and no instance starts again (db/migrate.ts
 * exclusively). So the command must wait while a starting instance has the turn.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { exclusively } from '../../db/migrate.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;

pgTest('npm run migrate waits while a starting instance has the migration turn, then migrates [postgres]', async (t) => {
  t.timeout(120_000);
  const database = await createTestDatabase('postgres');
  const db = database.connect();
  try {
    let output = '';
    let exitedWhileHeld: number | null | undefined;
    let exited!: Promise<number | null>;
    // The turn a starting instance takes around its migrations and demo seeding (app.ts startPortico).
    await exclusively(db, async () => {
      const child = spawn(process.execPath, ['--import=tsx', 'scripts/migrate.ts'], { env: { ...process.env, DATABASE_URL: database.url }, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      exited = new Promise((resolve) => child.on('close', resolve));
      // Long enough for the command to start and migrate a new database (about 3 s here) had it not waited.
      exitedWhileHeld = await Promise.race([exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 8_000))]);
    });
    t.is(exitedWhileHeld, undefined, `npm run migrate ran while an instance had the turn: ${output}`);
    t.is(await exited, 0, output);
    t.regex(output, /^applied: 20261121_0001_accounts/);
  } finally {
    await db.destroy();
    await database.drop();
  }
});
