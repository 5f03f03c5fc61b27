/**
 * The console behind a TLS-terminating proxy: `PUBLIC_API_URL` is https, the proxy talks plain
 * http to Portico. Its cookies are `Secure` (docs/console.md) and its pages work; Koa's cookies
 * refuse a `Secure` cookie on a request they do not see as https, which made every page that sets
 * one a 500 `internal` unless `TRUST_PROXY` was set and the proxy sent `X-Forwarded-Proto`.
 */
import test from 'ava';
import { consoleMount } from '../../../auth/console/index.js';
import { addMembership, createTenant, createUser } from '../../../db/accounts.js';
import { buildCatalog } from '../../../shared/catalog.js';
import { EventBus } from '../../../shared/events.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { startTestServer } from '../../helpers/server.js';
import { PASSWORD, Session } from '../setup.js';

const PUBLIC_ORIGIN = 'https://console.portico.test';

for (const kind of databasesUnderTest()) {
  test(`with an https PUBLIC_API_URL the console signs in and out over the proxy's plain http, with Secure cookies [${kind}]`, async (t) => {
    const server = await startTestServer(kind, {
      env: { PUBLIC_API_URL: `${PUBLIC_ORIGIN}/api` },
      mounts: [consoleMount({ catalog: buildCatalog([]), events: new EventBus() })],
    });
    t.teardown(() => server.close());
    const { db } = server.portico.context;
    const tenant = await createTenant(db, { slug: 'acme', name: 'Acme Corporation' });
    const user = await createUser(db, { email: 'admin@acme.example', password: PASSWORD });
    await addMembership(db, { userId: user.id, tenantId: tenant.id, role: 'admin' });

    // The browser's forms come from the public origin, through the proxy.
    const browser = new Session(server.url);
    const headers = { origin: PUBLIC_ORIGIN };
    const login = await browser.request('/api/mcp/login');
    t.is(login.status, 200, login.text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(-300));
    for (const cookie of login.headers.getSetCookie()) t.regex(cookie, /;\s*secure/i, cookie);

    const signedIn = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'admin@acme.example', password: PASSWORD }, headers });
    t.is(signedIn.status, 302, signedIn.text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(-300));
    t.is(signedIn.location, '/api/mcp/connections');
    const session = signedIn.headers.getSetCookie().filter((c) => c.startsWith('portico_console='));
    t.true(session.length > 0, 'a session cookie was set');
    for (const cookie of session) t.regex(cookie, /;\s*secure/i, cookie);

    const connections = await browser.request('/api/mcp/connections');
    t.is(connections.status, 200);
    const out = await browser.request('/api/mcp/logout', { form: { csrf: Session.csrfOf(connections.text) }, headers });
    t.is(out.status, 302);
    t.is(out.location, '/api/mcp/login');
    t.is((await browser.request('/api/mcp/connections')).location, '/api/mcp/login', 'signed out');
  });
}
