/**
 * The console's sign-in cookie across a key rotation: one used after `keys activate` is signed
 * again with the new cookie key, with its own path and attributes (Koa's cookies would re-sign it
 * at path "/" only, which the browser sends after the old signature), so it outlives `keys retire`.
 */
import test from 'ava';
import { consoleMount } from '../../../auth/console/index.js';
import { addMembership, createTenant, createUser } from '../../../db/accounts.js';
import { runAdmin } from '../../../scripts/admin.js';
import { buildCatalog } from '../../../shared/catalog.js';
import { EventBus } from '../../../shared/events.js';
import { createTestDatabase, databasesUnderTest, type TestDatabase } from '../../helpers/db.js';
import { freePort, startTestServer, type TestServer } from '../../helpers/server.js';
import { Session } from '../setup.js';

const PASSWORD = 'console-test-password';

async function admin(database: TestDatabase, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { DATABASE_URL: database.url });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

for (const kind of databasesUnderTest()) {
  test(`a console sign-in used after keys activate survives keys retire [${kind}]`, async (t) => {
    t.timeout(120_000);
    const database = await createTestDatabase(kind);
    const port = await freePort();
    const env = { PORT: String(port), PUBLIC_AUTH_URL: `http://127.0.0.1:${port}` };
    const start = () => startTestServer(kind, { database, env, mounts: [consoleMount({ catalog: buildCatalog([]), events: new EventBus() })] });
    let server: TestServer = await start();
    const restart = async () => {
      await server.stop();
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      server = await start();
    };
    try {
      const { db } = server.portico.context;
      const tenant = await createTenant(db, { slug: 'acme', name: 'Acme' });
      const user = await createUser(db, { email: 'admin@acme.example', password: PASSWORD });
      await addMembership(db, { userId: user.id, tenantId: tenant.id, role: 'admin' });
      const browser = new Session(server.url);
      const login = await browser.request('/api/mcp/login');
      const signedIn = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'admin@acme.example', password: PASSWORD } });
      t.is(signedIn.location, '/api/mcp/connections');
      t.is((await browser.request('/api/mcp/connections')).status, 200);

      t.is((await admin(database, 'keys', 'add')).code, 0);
      await restart();
      t.is((await browser.request('/api/mcp/connections')).status, 200);
      t.is((await admin(database, 'keys', 'activate')).code, 0);
      await restart();
      // Used after the activation: README says it is now signed with the new key.
      const used = await browser.request('/api/mcp/connections');
      t.is(used.status, 200, 'read with the previous cookie key');
      const resigned = used.headers.getSetCookie().filter((c) => c.startsWith('portico_console'));
      t.is(resigned.length, 2, 'the cookie and its new signature');
      for (const cookie of resigned) t.regex(cookie, /; path=\/api\/mcp; .*samesite=lax; httponly/, cookie);
      t.is((await browser.request('/api/mcp/connections')).status, 200);
      t.is((await admin(database, 'keys', 'retire')).code, 0);
      await restart();
      const after = await browser.request('/api/mcp/connections');
      t.is(after.status, 200, `a console sign-in used after keys activate must go on after keys retire (got ${after.status} → ${after.location})`);
    } finally {
      await server.stop();
      await database.drop();
    }
  });
}
