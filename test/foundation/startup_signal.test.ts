/**
 * SIGTERM or SIGINT while `npm start` is starting (migrating, waiting for its turn to, mounting):
 * waiting for the turn ends at once, the step under way finishes or rolls back, no further step
 * begins, what was opened is closed,
 * and the process exits with the conventional status of that signal (128 + its number), saying so
 * in the log. Before, the signal ended the process wherever it was.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import test from 'ava';
import { exclusively, MIGRATIONS } from '../../db/migrate.js';
import { Database } from '../../db/sqlite_client.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { until } from '../helpers/poll.js';
import { freePort } from '../helpers/server.js';

async function startMain(databaseUrl: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import=tsx', 'main.ts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: `http://127.0.0.1:${port}`, DEMO: 'off', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, exited, output: () => output };
}

const logLines = (output: string) => output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);

test('SIGTERM while the migrations wait for a write lock: they finish, the start stops before listening, exit 143 [sqlite]', async (t) => {
  t.timeout(60_000);
  const database = await createTestDatabase('sqlite');
  const { filename } = database.config as { filename: string };
  // Another writer holds SQLite's write lock, so the child's first migration waits for it.
  const holder = new Database(filename);
  holder.pragma('journal_mode = WAL');
  holder.exec('BEGIN IMMEDIATE');
  try {
    const main = await startMain(database.url);
    const opened = () => fs.readdirSync(`/proc/${main.child.pid}/fd`).some((fd) => {
      try {
        return fs.readlinkSync(`/proc/${main.child.pid}/fd/${fd}`) === filename;
      } catch {
        return false; // closed meanwhile
      }
    });
    t.true(await until(20_000, async () => opened() || undefined, 20), `the child never opened the database: ${main.output()}`);
    main.child.kill('SIGTERM');
    // The lock goes only once the child has taken the signal, while its migrations still wait.
    const heard = () => main.output().includes('stopping the start once its current step has finished');
    t.true(await until(20_000, async () => heard() || undefined, 20), `the child never said it would stop: ${main.output()}`);
    holder.exec('COMMIT');

    const { code, signal } = await main.exited;
    t.deepEqual({ code, signal }, { code: 143, signal: null }, main.output());
    const lines = logLines(main.output());
    t.like(lines.find((line) => line.msg === 'start interrupted'), { level: 'warn', signal: 'SIGTERM' }, main.output());
    t.false(lines.some((line) => line.msg === 'portico listening' || line.msg === 'start failed'), main.output());
    // The step under way finished: every migration is applied, none half.
    t.is((holder.prepare('select count(*) as n from knex_migrations').get() as { n: number }).n, MIGRATIONS.length);
  } finally {
    holder.close();
    await database.drop();
  }
});

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;

pgTest('SIGINT while waiting for the turn to migrate: the wait ends at once, its request withdrawn, nothing migrated, exit 130 [postgres]', async (t) => {
  t.timeout(60_000);
  const database = await createTestDatabase('postgres');
  const db = database.connect();
  let main: Awaited<ReturnType<typeof startMain>> | undefined;
  try {
    const schema = (await db.raw('select current_schema() as schema')).rows[0].schema as string;
    // The child's request for the turn, while it waits for it.
    const waiting = async () => {
      const { rows } = await db.raw(
        // pg_locks shows every database's locks; each test's has its own database, with the same schema name.
        `select 1 from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())
          and objid::text::bigint = (hashtext('portico.start ' || ?)::bigint & 4294967295)`, [schema],
      );
      return rows.length > 0;
    };
    // The turn a starting instance takes around its migrations (db/migrate.ts exclusively), held
    // here until the child has exited: another instance's migrations can take long.
    await exclusively(db, async () => {
      main = await startMain(database.url);
      t.true(await until(20_000, async () => (await waiting()) || undefined), `the child never waited for the turn: ${main.output()}`);
      main.child.kill('SIGINT');
      const exited = await Promise.race([main.exited, new Promise<'still running'>((resolve) => setTimeout(resolve, 15_000, 'still running'))]);
      t.deepEqual(exited, { code: 130, signal: null }, main.output());
      t.like(logLines(main.output()).find((line) => line.msg === 'start interrupted'), { level: 'warn', signal: 'SIGINT' }, main.output());
      // Withdrawn, not abandoned: a request left in the queue would take the turn before the next instance's.
      t.false(await waiting(), 'the child left its request for the turn in the queue');
    });
    t.false(await db.schema.hasTable('knex_migrations'), 'nothing was migrated');
  } finally {
    main?.child.kill('SIGKILL'); // only if it failed to stop
    await db.destroy();
    await database.drop();
  }
});
