/**
 * Starting on a database the demo may be seeded in (README "Running it": the demo accounts and
 * their passwords are printed once): the demo is seeded only once the port is ours, never into a
 * database an operator has begun to fill, and instances started together on one PostgreSQL take
 * turns, so both start and one seeds.
 */
import net from 'node:net';
import test from 'ava';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/log.js';
import { startPortico } from '../../app.js';
import { defaultMounts, defaultSeeders } from '../../mounts.js';
import { createTenant } from '../../db/accounts.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { freePort, startTestServer } from '../helpers/server.js';

function configFor(url: string, port: number) {
  return loadConfig({ PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: `http://127.0.0.1:${port}`, DATABASE_URL: url, LOG_LEVEL: 'silent' });
}

test('a first start that fails to listen (port taken) does not lose the demo passwords for good', async (t) => {
  const database = await createTestDatabase('sqlite');
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
  const busyPort = (taken.address() as net.AddressInfo).port;
  try {
    // 1st `npm start`: the port is in use, the start fails (exit 1) ...
    await t.throwsAsync(startPortico(configFor(database.url, busyPort), { log: createLogger('silent'), mounts: defaultMounts(), seeders: defaultSeeders() }), { code: 'EADDRINUSE' });
    // ... the operator frees the port and starts again on the same database.
    const port = await freePort();
    const portico = await startPortico(configFor(database.url, port), { log: createLogger('silent'), mounts: defaultMounts(), seeders: defaultSeeders() });
    try {
      // The failed start seeded nothing; this one seeds, and so has passwords to show.
      t.is(portico.demoCredentials?.length, 5);
      t.is(Number((await portico.context.db('users').count({ n: '*' }).first())?.n), 5);
    } finally {
      await portico.close();
    }
  } finally {
    taken.close();
    await database.drop();
  }
});

test('npm start with the demo on starts after the operator created a tenant named acme', async (t) => {
  const database = await createTestDatabase('sqlite');
  try {
    // `npm run admin -- tenant create acme --name "Acme Inc"` before the first `npm start`.
    const pre = database.connect();
    const { migrateLatest } = await import('../../db/migrate.js');
    await migrateLatest(pre);
    await createTenant(pre, { slug: 'acme', name: 'Acme Inc' });
    await pre.destroy();
    const port = await freePort();
    const started = await startPortico(configFor(database.url, port), { log: createLogger('silent'), mounts: defaultMounts(), seeders: defaultSeeders() });
    try {
      t.is(started.demoCredentials, undefined, 'no demo in a database an operator has begun to fill');
      t.deepEqual(await started.context.db('tenants').pluck('name'), ['Acme Inc']);
      t.is(Number((await started.context.db('users').count({ n: '*' }).first())?.n), 0);
    } finally {
      await started.close();
    }
  } finally {
    await database.drop();
  }
});

// README "Running several instances": N identical instances on one PostgreSQL, started together on
// an empty database (a deployment with two replicas).
const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;
pgTest('two instances started together on an empty PostgreSQL database both start [postgres]', async (t) => {
  const database = await createTestDatabase('postgres');
  const started: Array<{ close(): Promise<void>; demoCredentials?: unknown[] }> = [];
  try {
    const [a, b] = await Promise.all([freePort(), freePort()]);
    const results = await Promise.allSettled([a, b].map((port) =>
      startPortico(configFor(database.url, port), { log: createLogger('silent'), mounts: defaultMounts(), seeders: defaultSeeders() })));
    for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    t.deepEqual(failures, [], 'an instance failed to start');
    t.deepEqual(started.map((p) => (p as { demoCredentials?: unknown[] }).demoCredentials?.length ?? 0).sort(), [0, 5], 'one of them seeded the demo');
  } finally {
    for (const p of started) await p.close();
    await database.drop();
  }
});

test('a second instance on the same SQLite file says that SQLite serves one instance; a restart does not', async (t) => {
  const database = await createTestDatabase('sqlite');
  const warning = /another instance is running on this SQLite file/;
  try {
    const first = await startTestServer('sqlite', { database });
    const second = await startTestServer('sqlite', { database });
    t.false(first.logs.some((line) => warning.test(line)));
    t.true(second.logs.some((line) => warning.test(line) && line.includes('"level":"warn"')), second.logs.join('\n').slice(0, 500));
    await second.stop();
    await first.stop();
    const restarted = await startTestServer('sqlite', { database });
    t.false(restarted.logs.some((line) => warning.test(line)), 'the stopped instances removed themselves');
    await restarted.stop();
  } finally {
    await database.drop();
  }
});

test('/readyz answers 503 "starting" until the demo is seeded, then ready', async (t) => {
  const database = await createTestDatabase('sqlite');
  const port = await freePort();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slowSeeder = async () => gate;
  const starting = startPortico(configFor(database.url, port), { log: createLogger('silent'), mounts: defaultMounts(), seeders: [slowSeeder] });
  try {
    let early: Response | undefined;
    for (let i = 0; i < 200 && !early; i += 1) {
      early = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      if (!early) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    t.is(early?.status, 503, 'listening, not yet seeded');
    t.deepEqual(await early?.json(), { status: 'unavailable', reason: 'starting' });
    release();
    const portico = await starting;
    try {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      t.is(ready.status, 200);
      t.is(portico.demoCredentials?.length, 5);
    } finally {
      await portico.close();
    }
  } finally {
    release();
    await starting.then((p) => p.close(), () => undefined);
    await database.drop();
  }
});
