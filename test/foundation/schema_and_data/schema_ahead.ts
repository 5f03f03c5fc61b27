/**
 * A database migrated by a newer Portico (the deployment rolled back, an older instance restarted)
 * is refused by `npm start`, `npm run migrate` and `npm run admin` with a message that says so and
 * names the migrations this version does not know, never knex's "the migration directory is
 * corrupt"; nothing is applied or written.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { loadConfig } from '../../../shared/config.js';
import { createLogger } from '../../../shared/log.js';
import { startPortico } from '../../../app.js';
import { defaultMounts } from '../../../mounts.js';
import { runAdmin } from '../../../scripts/admin.js';
import { createMigratedDatabase, testOnEachDatabase, type MigratedDatabase } from '../../helpers/db.js';

const FUTURE = '20391231_9999_from_a_newer_version';

async function fromTheFuture(database: MigratedDatabase): Promise<void> {
  await database.db('knex_migrations').insert({ name: FUTURE, batch: 99, migration_time: new Date() });
}

function run(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import=tsx', script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

testOnEachDatabase('a database migrated by a newer version is refused by the admin CLI and the server, naming the unknown migration', async (t, database) => {
  await fromTheFuture(database);
  const tenants = async () => Number((await database.db('tenants').count({ n: '*' }).first())?.n);

  const err: string[] = [];
  const code = await runAdmin(['tenant', 'create', 'acme', '--name', 'Acme'], { out: () => undefined, err: (line) => err.push(line), stdin: async () => '' }, { DATABASE_URL: database.url });
  t.is(code, 1);
  t.is(err.length, 1, err.join('\n'));
  t.regex(err[0], /^error: the database was migrated by a newer version of Portico/);
  t.true(err[0].includes(FUTURE), err[0]);
  t.notRegex(err[0], /corrupt/);
  t.is(await tenants(), 0, 'nothing written');

  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PUBLIC_AUTH_URL: 'http://127.0.0.1:1', DATABASE_URL: database.url, DEMO: 'on', LOG_LEVEL: 'silent' });
  const error = await t.throwsAsync(startPortico(config, { log: createLogger('silent'), mounts: defaultMounts() }));
  t.regex(error?.message ?? '', /migrated by a newer version of Portico/);
  t.true(error?.message.includes(FUTURE));
  t.is(await tenants(), 0, 'no demo was seeded');
});

test('npm start and npm run migrate on a database migrated by a newer version exit 1 with a clear line (real processes) [sqlite]', async (t) => {
  const database = await createMigratedDatabase('sqlite');
  t.teardown(() => database.drop());
  await fromTheFuture(database);
  const env = { DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', PUBLIC_AUTH_URL: 'http://127.0.0.1:1', DEMO: 'off', LOG_LEVEL: 'info' };

  const migrate = await run('scripts/migrate.ts', [], env);
  t.is(migrate.code, 1, migrate.output);
  t.regex(migrate.output, /error: migration failed: the database was migrated by a newer version of Portico/);
  t.notRegex(migrate.output, /corrupt/);

  const start = await run('main.ts', [], env);
  t.is(start.code, 1, start.output);
  const failure = start.output.split('\n').find((line) => line.includes('"level":"error"'));
  t.truthy(failure, start.output);
  t.regex(failure!, /start failed: the database was migrated by a newer version of Portico/);
  t.notRegex(start.output, /corrupt|Migrator\.js/, 'no knex wording, no stack');
});
