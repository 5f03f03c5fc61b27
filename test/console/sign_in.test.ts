/** The console's sign-in limit, server-side sessions that logout really ends, and error pages that name their code. */
import test from 'ava';
import { databasesUnderTest, testOnEachDatabase } from '../helpers/db.js';
import { MIGRATIONS } from '../../db/migrate.js';
import { setTenantSuspended } from '../../db/accounts.js';
import { startConsole, PASSWORD, Session, signIn } from './setup.js';

for (const kind of databasesUnderTest()) {
  test(`the 11th sign-in attempt in a minute is refused with 429, even with the right password; other emails are not [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = new Session(f.server.url);
      let page = await browser.request('/api/mcp/login');
      for (let attempt = 1; attempt <= 10; attempt += 1) {
        // The limit keys on the lowercased email, so a change of case is the same person.
        const email = attempt % 2 ? 'admin@acme.example' : 'Admin@Acme.Example';
        page = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(page.text), email, password: `wrong guess ${attempt}` } });
        t.is(page.status, 401, `attempt ${attempt}`);
      }
      const eleventh = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(page.text), email: 'admin@acme.example', password: PASSWORD } });
      t.is(eleventh.status, 429);
      t.is(eleventh.location, null);
      const retryAfter = Number(eleventh.headers.get('retry-after'));
      t.true(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      t.regex(eleventh.text, new RegExp(`<p class="error" role="alert" id="sign-in-error">Too many sign-in attempts\\. Wait ${retryAfter} seconds and try again\\.</p>`));
      t.regex(eleventh.text, /<button type="submit">Sign in<\/button>/, 'the sign-in page, with its form');
      t.is((await browser.request('/api/mcp/connections')).location, '/api/mcp/login', 'no session was started');

      const other = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(eleventh.text), email: 'ann@acme.example', password: PASSWORD } });
      t.is(other.location, '/api/mcp/connections', 'another email from the same address signs in');
      t.is((await browser.request('/api/mcp/connections')).status, 200);
    } finally {
      await f.close();
    }
  });

  test(`another spelling of a limited email (whitespace, case) is limited too; one longer than any account's is refused unread [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = new Session(f.server.url);
      let page = await browser.request('/api/mcp/login');
      for (let attempt = 1; attempt <= 10; attempt += 1) {
        page = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(page.text), email: 'admin@acme.example', password: `wrong guess ${attempt}` } });
        t.is(page.status, 401, `attempt ${attempt}`);
      }
      for (const email of ['  admin@acme.example', 'admin@acme.example\t\n', ' ADMIN@Acme.Example ', `\tadmin@ACME.example${' '.repeat(230)}`]) {
        page = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(page.text), email, password: PASSWORD } });
        t.is(page.status, 429, JSON.stringify(email));
        t.true(Number(page.headers.get('retry-after')) >= 1);
      }
      // The review's padding: whitespace past the old 254-character cut, then a character the cut dropped.
      for (const padding of [' ', '\t', ' \t']) {
        page = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(page.text), email: `admin@acme.example${padding.repeat(240)}x`, password: PASSWORD } });
        t.is(page.status, 400, `padding ${JSON.stringify(padding)}: refused, not a sign-in`);
        t.is(page.location, null);
        t.regex(page.text, /<p class="error" role="alert" id="sign-in-error">An e-mail address has at most 254 characters\.<\/p>/);
      }
      t.is((await browser.request('/api/mcp/connections')).location, '/api/mcp/login', 'no session was started');
    } finally {
      await f.close();
    }
  });

  test(`a suspended organization's console ends its sessions and signs nobody in; resumed, it does again [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const browser = await signIn(f, 'admin@acme.example');
      t.is((await browser.request('/api/mcp/connections')).status, 200);

      await setTenantSuspended(db, f.tenants.acme, true);
      t.is((await browser.request('/api/mcp/connections')).location, '/api/mcp/login?ended=1', 'the open session ended');
      t.is(await db('console_sessions').where({ user_id: f.users.acmeAdmin }).first(), undefined);
      const page = await browser.request('/api/mcp/login');
      const refused = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(page.text), email: 'admin@acme.example', password: PASSWORD } });
      t.is(refused.status, 403);
      t.regex(refused.text, /Your account is not a member of any active organization\./);

      await setTenantSuspended(db, f.tenants.acme, false);
      const again = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(refused.text), email: 'admin@acme.example', password: PASSWORD } });
      t.is(again.location, '/api/mcp/connections');
    } finally {
      await f.close();
    }
  });

  test(`logout ends the session on the server: a saved copy of the cookie no longer works [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const browser = await signIn(f, 'admin@acme.example');
      const list = await browser.request('/api/mcp/connections');
      t.is(list.status, 200);
      const saved = browser.cookieFor('/api/mcp/connections');
      const replay = (path: string) => fetch(`${f.server.url}${path}`, { headers: { cookie: saved }, redirect: 'manual' });
      t.is((await replay('/api/mcp/connections')).status, 200, 'the copy works while the session lives');

      // The database holds the id's hash, never the id the cookie carries.
      const rows = await db('console_sessions').where({ user_id: f.users.acmeAdmin });
      t.is(rows.length, 1);
      const cookieId = /portico_console=([^;]+)/.exec(saved)![1];
      t.not(rows[0].id_hash, cookieId);
      t.is(Number(rows[0].expires_at) - Number(rows[0].created_at), 12 * 3600_000);

      const out = await browser.request('/api/mcp/logout', { form: { csrf: Session.csrfOf(list.text) } });
      t.is(out.location, '/api/mcp/login');
      t.is((await db('console_sessions').where({ user_id: f.users.acmeAdmin })).length, 0);
      // The sign-in page says the session ended, and brings the person back to the page asked for.
      for (const [path, location] of [
        ['/api/mcp/connections', '/api/mcp/login?ended=1'],
        ['/api/mcp/audit', '/api/mcp/login?next=%2Fapi%2Fmcp%2Faudit&ended=1'],
        ['/api/mcp/organization', '/api/mcp/login?ended=1'],
      ]) {
        const refused = await replay(path);
        t.is(refused.status, 302, path);
        t.is(refused.headers.get('location'), location, path);
      }
      const forged = await fetch(`${f.server.url}/api/mcp/connections/${f.forge.ann.connection.id}/revoke`, {
        method: 'POST', redirect: 'manual',
        headers: { cookie: saved, 'content-type': 'application/x-www-form-urlencoded', origin: f.server.url },
        body: new URLSearchParams({ csrf: Session.csrfOf(list.text) }).toString(),
      });
      t.is(forged.status, 302, 'a state-changing form with the old cookie and its old token is refused too');
      t.is(forged.headers.get('location'), '/api/mcp/login?ended=unsent', 'and told that what it sent was not done');

      const again = await signIn(f, 'admin@acme.example');
      t.is((await again.request('/api/mcp/connections')).status, 200, 'a fresh sign-in works');
      t.is((await replay('/api/mcp/connections')).status, 302, 'and does not revive the old cookie');
    } finally {
      await f.close();
    }
  });

  test(`choosing an organization replaces the session; sign-in prunes expired ones [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      await db('console_sessions').insert({ id_hash: 'expired-session-hash', user_id: f.users.ann, tenant_id: f.tenants.acme, created_at: 1, expires_at: Date.now() - 1 });
      const browser = new Session(f.server.url);
      const login = await browser.request('/api/mcp/login');
      const result = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'multi@example.com', password: PASSWORD } });
      t.is(result.location, '/api/mcp/organization');
      t.is((await db('console_sessions').where({ id_hash: 'expired-session-hash' })).length, 0, 'the expired row was pruned at sign-in');
      const beforeChoice = browser.cookieFor('/api/mcp/organization');
      const choose = await browser.request('/api/mcp/organization');
      await browser.request('/api/mcp/organization', { form: { csrf: Session.csrfOf(choose.text), tenant: 'globex' } });
      const list = await browser.request('/api/mcp/connections');
      t.is(list.status, 200);
      t.regex(list.text, /admin@globex\.example/);
      const old = await fetch(`${f.server.url}/api/mcp/organization`, { headers: { cookie: beforeChoice }, redirect: 'manual' });
      t.is(old.headers.get('location'), '/api/mcp/login?ended=1', 'the pre-choice session is gone');
      t.is((await db('console_sessions').where({ user_id: f.users.multi })).length, 1);
    } finally {
      await f.close();
    }
  });

  test(`an organization choice posted without an organization is invalid_request, not "not a member"; the session is kept [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const browser = await signIn(f, 'multi@example.com');
      const choose = await browser.request('/api/mcp/organization');
      const csrf = Session.csrfOf(choose.text);
      for (const form of [{ csrf }, { csrf, tenant: '' }] as Array<Record<string, string>>) {
        const label = JSON.stringify(Object.keys(form));
        const refused = await browser.request('/api/mcp/organization', { form });
        t.is(refused.status, 400, label);
        t.regex(refused.text, /invalid_request/, label);
        t.regex(refused.text, /Choose an organization\./, label);
        t.notRegex(refused.text, /not a member/, label);
      }
      // Naming an organization the person is not in is still forbidden.
      const foreign = await browser.request('/api/mcp/organization', { form: { csrf, tenant: 'initech' } });
      t.is(foreign.status, 403);
      t.regex(foreign.text, /forbidden/);
      t.deepEqual((await db('console_sessions').where({ user_id: f.users.multi }).select('tenant_id')).map((s: { tenant_id: string | null }) => s.tenant_id), [null], 'still the signed-in session, no organization chosen');
      const chosen = await browser.request('/api/mcp/organization', { form: { csrf, tenant: 'acme' } });
      t.is(chosen.location, '/api/mcp/connections', 'the same form then chooses');
    } finally {
      await f.close();
    }
  });

  test(`switching organizations keeps the sign-in's end: the 12 hours are not renewed [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const browser = await signIn(f, 'multi@example.com');
      // The sign-in is near its end: a minute left.
      const end = Date.now() + 60_000;
      t.is(await db('console_sessions').where({ user_id: f.users.multi }).update({ expires_at: end }), 1);
      for (const tenant of ['globex', 'acme', 'globex']) {
        const choose = await browser.request('/api/mcp/organization');
        t.is(choose.status, 200);
        await browser.request('/api/mcp/organization', { form: { csrf: Session.csrfOf(choose.text), tenant } });
        const rows = await db('console_sessions').where({ user_id: f.users.multi });
        t.is(rows.length, 1);
        t.is(Number(rows[0].expires_at), end, `after choosing ${tenant}`);
        t.is((await browser.request('/api/mcp/connections')).status, 200);
      }
    } finally {
      await f.close();
    }
  });

  test(`console error pages show the error code and the request id [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const id = (name: string) => `console-${name}-${kind}`;
      const expect = async (response: { status: number; text: string; headers: Headers }, status: number, code: string, requestId: string) => {
        t.is(response.status, status, code);
        t.regex(response.headers.get('content-type') ?? '', /text\/html/, code);
        t.true(response.text.includes(`Error code <code>${code}</code> · request <code>${requestId}</code>`), `${code} page names its code and request`);
        t.is(response.headers.get('x-request-id'), requestId);
      };
      const anonymous = new Session(f.server.url);
      await anonymous.request('/api/mcp/login');
      await expect(await anonymous.request('/api/mcp/login', { form: { email: 'admin@acme.example', password: PASSWORD }, headers: { 'x-request-id': id('csrf') } }), 403, 'csrf_failed', id('csrf'));

      const browser = await signIn(f, 'admin@acme.example');
      const list = await browser.request('/api/mcp/connections');
      const csrf = Session.csrfOf(list.text);
      await expect(await browser.request(`/api/mcp/connections/${f.forge.globexAdmin.connection.id}`, { headers: { 'x-request-id': id('tenant') } }), 403, 'forbidden_cross_tenant', id('tenant'));
      await expect(await browser.request('/api/mcp/connections/00000000-0000-4000-8000-000000000000', { headers: { 'x-request-id': id('missing') } }), 404, 'not_found', id('missing'));
      await expect(await browser.request('/api/mcp/audit?limit=0', { headers: { 'x-request-id': id('bad') } }), 400, 'invalid_request', id('bad'));
      const revoke = `/api/mcp/connections/${f.forge.ann.connection.id}/revoke`;
      await expect(await browser.request(revoke, { form: { csrf, padding: 'x'.repeat(70_000) }, headers: { 'x-request-id': id('large') } }), 413, 'payload_too_large', id('large'));
      const plain = await fetch(`${f.server.url}${revoke}`, {
        method: 'POST', redirect: 'manual', body: `csrf=${csrf}`,
        headers: { cookie: browser.cookieFor(revoke), 'content-type': 'text/plain', origin: f.server.url, 'x-request-id': id('media') },
      });
      await expect({ status: plain.status, headers: plain.headers, text: await plain.text() }, 415, 'unsupported_media_type', id('media'));
    } finally {
      await f.close();
    }
  });
}

testOnEachDatabase('the console_sessions migration steps down and up again', async (t, { db }) => {
  const [, migration] = MIGRATIONS.find(([name]) => name === '20261123_0018_console_sessions') ?? [];
  if (!migration) return t.fail('db/migrate.ts does not list 20261123_0018_console_sessions');
  t.true(await db.schema.hasTable('console_sessions'));
  await migration.down(db);
  t.false(await db.schema.hasTable('console_sessions'));
  await migration.up(db);
  for (const column of ['id_hash', 'user_id', 'tenant_id', 'created_at', 'expires_at']) t.true(await db.schema.hasColumn('console_sessions', column), column);
});
