import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { startConsole, PASSWORD, Session, signIn } from './setup.js';
import { authenticateBearer } from '../../db/grant_store.js';

for (const kind of databasesUnderTest()) {
  test(`sign in, see connections in plain words, revoke with a confirmation step [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = new Session(f.server.url);
      const first = await browser.request('/api/mcp/connections');
      t.is(first.status, 302);
      t.is(first.location, '/api/mcp/login');
      const login = await browser.request('/api/mcp/login');
      t.regex(login.text, /<label for="email">Email<\/label>/);
      t.regex(login.text, /<label for="password">Password<\/label>/);
      t.regex(login.text, /<button type="submit">Sign in<\/button>/);
      t.regex(login.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
      t.is(login.headers.get('x-frame-options'), 'DENY');
      const wrong = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'admin@acme.example', password: 'not the password' } });
      t.is(wrong.status, 401);
      t.regex(wrong.text, /do not match an account/);
      const ok = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(wrong.text), email: 'admin@acme.example', password: PASSWORD } });
      t.is(ok.location, '/api/mcp/connections');
      const list = await browser.request('/api/mcp/connections');
      t.is(list.status, 200);
      t.regex(list.text, /ann@acme\.example/);
      t.regex(list.text, /bob@acme\.example/);
      t.notRegex(list.text, /globex\.example/);
      t.regex(list.text, /registered itself \(unverified\)/);
      t.regex(list.text, /<svg role="img" aria-label="\d+ calls? in the last 14 days/);

      const id = f.forge.ann.connection.id;
      const confirm = await browser.request(`/api/mcp/connections/${id}/revoke`);
      t.regex(confirm.text, /Revoke this connection\?/);
      const forged = await browser.request(`/api/mcp/connections/${id}/revoke`, { form: { csrf: 'forged' } });
      t.is(forged.status, 403);
      const crossSite = await browser.request(`/api/mcp/connections/${id}/revoke`, { form: { csrf: Session.csrfOf(confirm.text) }, headers: { 'sec-fetch-site': 'cross-site' } });
      t.is(crossSite.status, 403);
      const { db, config } = f.server.portico.context;
      t.truthy(await authenticateBearer(db, f.forge.ann.token, `${config.mcpUrl}/forge`), 'refused forms revoked nothing');
      const done = await browser.request(`/api/mcp/connections/${id}/revoke`, { form: { csrf: Session.csrfOf(confirm.text) } });
      t.is(done.location, '/api/mcp/connections?notice=revoked');
      await t.throwsAsync(authenticateBearer(db, f.forge.ann.token, `${config.mcpUrl}/forge`), { message: 'this connection was revoked' });
      const detail = await browser.request(`/api/mcp/connections/${id}`);
      t.regex(detail.text, /badge bad">revoked/);
      t.regex(detail.text, /connection\.revoke/);
    } finally {
      await f.close();
    }
  });

  test(`a person in two organizations chooses one; pages stay inside it [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = new Session(f.server.url);
      const login = await browser.request('/api/mcp/login');
      const result = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'multi@example.com', password: PASSWORD } });
      t.is(result.location, '/api/mcp/organization');
      const choose = await browser.request('/api/mcp/organization');
      t.regex(choose.text, /<label for="tenant">Organization<\/label>/);
      const intruder = await browser.request('/api/mcp/organization', { form: { csrf: Session.csrfOf(choose.text), tenant: 'initech' } });
      t.is(intruder.status, 403);
      await browser.request('/api/mcp/organization', { form: { csrf: Session.csrfOf(choose.text), tenant: 'globex' } });
      const list = await browser.request('/api/mcp/connections');
      t.regex(list.text, /admin@globex\.example/, 'multi is an admin of globex and sees its connections');
      t.notRegex(list.text, /acme\.example/);
      const foreign = await browser.request(`/api/mcp/connections/${f.forge.ann.connection.id}`);
      t.is(foreign.status, 403);
      t.regex(foreign.text, /belongs to another organization/);
    } finally {
      await f.close();
    }
  });

  test(`members see their own connections and cannot open another's [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = await signIn(f, 'ann@acme.example');
      const list = await browser.request('/api/mcp/connections');
      t.regex(list.text, /ann@acme\.example/);
      t.notRegex(list.text, /bob@acme\.example/);
      const other = await browser.request(`/api/mcp/connections/${f.forge.bob.connection.id}/revoke`);
      t.is(other.status, 403);
      const logout = await browser.request('/api/mcp/connections');
      const out = await browser.request('/api/mcp/logout', { form: { csrf: Session.csrfOf(logout.text) } });
      t.is(out.location, '/api/mcp/login');
      t.is((await browser.request('/api/mcp/connections')).location, '/api/mcp/login');
    } finally {
      await f.close();
    }
  });
}
