/**
 * Behind TRUST_PROXY=n proxies the per-address limits (registration, sign-in) key on the address
 * the proxies saw, not on what the client wrote into X-Forwarded-For itself: a proxy such as nginx
 * (`proxy_add_x_forwarded_for`) or an AWS ALB appends the peer's address to the header the client
 * sent, so the entries left of the proxies' own are the client's claim.
 */import test from 'ava';
import { addMembership, createTenant, createUser } from '../../../db/accounts.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { rememberSecret } from '../../helpers/secrets.js';
import { startTestServer } from '../../helpers/server.js';
import { Session } from '../../console/setup.js';

const PASSWORD = 'forwarded-for-password';
rememberSecret(PASSWORD);

/** What the proxy forwards: the client's own X-Forwarded-For, with the address the proxy saw appended. */
const viaProxy = (spoofed: string) => ({ 'x-forwarded-for': `${spoofed}, 203.0.113.7`, 'x-forwarded-proto': 'http' });

for (const kind of databasesUnderTest()) {
  test(`TRUST_PROXY=1: a client cannot dodge the registration limit by writing its own X-Forwarded-For [${kind}]`, async (t) => {
    const server = await startTestServer(kind, { env: { TRUST_PROXY: '1' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 25; i += 1) {
        const response = await fetch(`${server.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...viaProxy(`10.0.${i >> 8}.${i & 255}`) },
          body: JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' }),
        });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
      // The default limit is 20 registrations a minute from one address: the one the proxy saw.
      t.is(statuses.filter((s) => s === 201).length, 20, JSON.stringify(statuses));
      t.is(statuses.filter((s) => s === 429).length, 5, JSON.stringify(statuses));
    } finally {
      await server.close();
    }
  });

  test(`TRUST_PROXY=1: password guessing in the console is limited however X-Forwarded-For is spoofed [${kind}]`, async (t) => {
    const server = await startTestServer(kind, { env: { TRUST_PROXY: '1' } });
    try {
      const { db } = server.portico.context;
      const tenant = await createTenant(db, { slug: 'acme', name: 'Acme Corporation' });
      const user = await createUser(db, { email: 'admin@acme.example', password: PASSWORD });
      await addMembership(db, { userId: user.id, tenantId: tenant.id, role: 'admin' });
      const browser = new Session(server.url);
      let page = await browser.request('/api/mcp/login', { headers: viaProxy('10.1.0.0') });
      const statuses: number[] = [];
      for (let attempt = 1; attempt <= 12; attempt += 1) {
        page = await browser.request('/api/mcp/login', {
          headers: viaProxy(`10.1.0.${attempt}`),
          form: { csrf: Session.csrfOf(page.text), email: 'admin@acme.example', password: `wrong guess ${attempt}` },
        });
        statuses.push(page.status);
      }
      t.deepEqual(statuses, [...Array(10).fill(401), 429, 429], 'the 11th guess in a minute from the proxy-seen address is refused');
      // ... and so is the right password, until the window passes.
      const right = await browser.request('/api/mcp/login', {
        headers: viaProxy('10.1.0.99'),
        form: { csrf: Session.csrfOf(page.text), email: 'admin@acme.example', password: PASSWORD },
      });
      t.is(right.status, 429);
    } finally {
      await server.close();
    }
  });
  test(`TRUST_PROXY=2: the client's address is the entry the outer of two proxies appended [${kind}]`, async (t) => {
    const server = await startTestServer(kind, { env: { TRUST_PROXY: '2' } });
    try {
      const register = async (forwardedFor: string) => {
        const response = await fetch(`${server.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': 'http' },
          body: JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' }),
        });
        await response.arrayBuffer();
        return response.status;
      };
      // 25 different people behind the same two proxies: each its own address, none limited.
      const people: number[] = [];
      for (let i = 0; i < 25; i += 1) people.push(await register(`198.51.100.${i + 1}, 10.0.0.2`));
      t.deepEqual(people, Array(25).fill(201));
      // One person writing 25 different entries of its own: one address, limited at 20.
      const one: number[] = [];
      for (let i = 0; i < 25; i += 1) one.push(await register(`10.9.0.${i}, 192.0.2.50, 10.0.0.2`));
      t.is(one.filter((s) => s === 201).length, 20, JSON.stringify(one));
      t.is(one.filter((s) => s === 429).length, 5, JSON.stringify(one));
    } finally {
      await server.close();
    }
  });
}
