import test from 'ava';
import { spawn } from 'node:child_process';
import { databasesUnderTest, createTestDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import type { Mount } from '../../app.js';

for (const kind of databasesUnderTest()) {
  test(`healthz, readyz and metrics answer [${kind}]`, async (t) => {
    const server = await startTestServer(kind);
    try {
      const health = await fetch(`${server.url}/healthz`);
      t.is(health.status, 200);
      t.is(((await health.json()) as { status: string }).status, 'ok');
      const ready = await fetch(`${server.url}/readyz`, { headers: { 'x-request-id': 'probe-1' } });
      t.is(ready.status, 200);
      t.is(ready.headers.get('x-request-id'), 'probe-1');
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      t.regex(metrics, /portico_http_request_duration_seconds_count\{method="GET",route="\/readyz",status="200"\} 1/);
      t.regex(metrics, /portico_db_pool_connections\{state="max"\} \d+/);
      const line = server.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.request_id === 'probe-1');
      t.like(line, { status: 200, path: '/readyz', method: 'GET' });
      t.is(typeof line.duration_ms, 'number');
    } finally {
      await server.close();
    }
  });

  test(`readyz reports 503 when the database is gone, and recovers [${kind}]`, async (t) => {
    const server = await startTestServer(kind);
    try {
      const { db } = server.portico.context;
      const original = db.client.acquireConnection.bind(db.client);
      db.client.acquireConnection = () => Promise.reject(new Error('database down'));
      t.is((await fetch(`${server.url}/readyz`)).status, 503);
      t.is((await fetch(`${server.url}/healthz`)).status, 200, 'liveness does not depend on the database');
      db.client.acquireConnection = original;
      t.is((await fetch(`${server.url}/readyz`)).status, 200);
    } finally {
      await server.close();
    }
  });

  test(`healthz, readyz and metrics asked with another method answer 405 with Allow, not 404 [${kind}]`, async (t) => {
    const server = await startTestServer(kind);
    try {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const response = await fetch(`${server.url}${path}`, { method: 'POST' });
        t.is(response.status, 405, path);
        t.is(response.headers.get('allow'), 'GET, HEAD', path);
        const body = (await response.json()) as { error: { code: string; request_id: string } };
        t.is(body.error.code, 'method_not_allowed', path);
        t.is(body.error.request_id, response.headers.get('x-request-id') ?? 'missing', path);
      }
      // Under any Host, as their GET answers: probes and scrapers use the instance's address.
      t.is((await fetch(`${server.url}/healthz`, { method: 'DELETE', headers: { host: 'probe.internal' } })).status, 405);
      t.is((await fetch(`${server.url}/healthz/`, { method: 'POST' })).status, 404, 'only the routes themselves');
    } finally {
      await server.close();
    }
  });

  test(`unknown routes get the REST error body [${kind}]`, async (t) => {
    const server = await startTestServer(kind);
    try {
      const response = await fetch(`${server.url}/no/such/thing`);
      t.is(response.status, 404);
      const body = (await response.json()) as { error: { code: string; request_id: string } };
      t.is(body.error.code, 'not_found');
      t.is(body.error.request_id, response.headers.get('x-request-id') ?? 'missing');
    } finally {
      await server.close();
    }
  });

  test(`demo data is created once; a restart keeps users and secrets [${kind}]`, async (t) => {
    const database = await createTestDatabase(kind);
    try {
      const first = await startTestServer(kind, { database, env: { DEMO: 'on' } });
      const credentials = first.portico.demoCredentials!;
      t.deepEqual(credentials.map((c) => c.email), ['admin@acme.example', 'member@acme.example', 'admin@globex.example', 'member@globex.example', 'multi@example.com']);
      t.regex(credentials[0].password, /^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
      t.not(credentials[0].password, credentials[1].password);
      const secrets = first.portico.context.secrets;
      await first.stop();
      const second = await startTestServer(kind, { database, env: { DEMO: 'on' } });
      t.is(second.portico.demoCredentials, undefined, 'no second demo on a non-empty database');
      t.deepEqual(second.portico.context.secrets, secrets);
      const users = await second.portico.context.db('users').count({ n: '*' }).first();
      t.is(Number(users?.n), 5);
      await second.stop();
    } finally {
      await database.drop();
    }
  });
}

test('DEMO_PASSWORD sets every demo password', async (t) => {
  const server = await startTestServer('sqlite', { env: { DEMO: 'on', DEMO_PASSWORD: 'demo-password-1' } });
  try {
    t.true(server.portico.demoCredentials!.every((c) => c.password === 'demo-password-1'));
  } finally {
    await server.close();
  }
});

test('shutdown lets an in-flight request finish and refuses new ones', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const arrived = new Promise<void>((resolve) => (entered = resolve));
  const slow: Mount = (app) => {
    app.use(async (ctx, next) => {
      if (ctx.path !== '/slow') return next();
      entered();
      await gate;
      ctx.body = { done: true };
    });
  };
  const server = await startTestServer('sqlite', { mounts: [slow] });
  try {
    const inFlight = fetch(`${server.url}/slow`);
    // In flight once the server has it: a connection not yet read from is idle, and closing ends it.
    await arrived;
    // Drain hooks run once the server has stopped accepting connections.
    const draining = new Promise<void>((resolve) => server.portico.context.onDrain(() => resolve()));
    const closing = server.stop();
    await draining;
    await t.throwsAsync(fetch(`${server.url}/healthz`));
    release();
    const response = await inFlight;
    t.deepEqual(await response.json(), { done: true });
    await closing;
  } finally {
    await server.close();
  }
});

test('npm start refuses a bad configuration value, naming it', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'main.ts'], { env: { ...process.env, PORT: 'eighty' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 2);
  t.regex(stderr, /invalid configuration: PORT: expected a whole number/);
});
