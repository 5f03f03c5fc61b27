/**
 * `user disable` and `user enable` (the operator CLI): a disabled account cannot sign in, its
 * browser sign-ins end, its connections are revoked in every organization, and no organization
 * loses its last administrator to it. Enabling lets the person sign in and connect again.
 */
import test from 'ava';
import { runAdmin } from '../../scripts/admin.js';
import { isAppError } from '../../shared/errors.js';
import { addMembership, createTenant, createUser, lockTenant, setMembershipRole, setUserDisabled } from '../../db/accounts.js';
import { backendOf, createMigratedDatabase, databasesUnderTest, testOnEachDatabase, waitingFor } from '../helpers/db.js';
import { authorizeWithPassword, CookieJar, follow, parseForm, postForm, refresh, registerClient, startAuthorization } from '../helpers/oauth.js';
import { admin, PASSWORD, refusal, startAuthServer, type AuthServer } from './support.js';

const scopes = ['forge.chat.read'];

/** The first page an authorization in this browser lands on: the sign-in form, or consent when already signed in. */
async function landing(server: AuthServer, jar: CookieJar, clientId: string) {
  const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes, jar });
  return (await follow(server.url, jar, auth.response)).html ?? '';
}

async function signIn(server: AuthServer, jar: CookieJar, html: string) {
  const form = parseForm(html);
  return postForm(server.url, jar, form.action, [['csrf', form.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]);
}

for (const kind of databasesUnderTest()) {
  test(`a disabled account cannot sign in, its sign-ins and connections end; enabled, it signs in again [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    const { db } = server.portico.context;
    try {
      const tokens = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'Editor', redirect_uris: ['http://127.0.0.1/callback'] });
      const jar = new CookieJar();
      t.regex((await follow(server.url, jar, await signIn(server, jar, await landing(server, jar, clientId)))).html!, /name="decision"/, 'signed in');

      // alice is acme's only administrator: disabling her would leave it without one, so nothing happens.
      const before = await db('users').where({ email: 'alice@acme.example' }).first();
      const refused = await admin(server, 'user', 'disable', '--email', 'alice@acme.example');
      t.is(refused.code, 1);
      t.is(refused.err, 'error: this is the last administrator of the tenant: make another member an administrator first');
      t.deepEqual(await db('users').where({ email: 'alice@acme.example' }).first(), before);
      t.is(await refusal(server, tokens.accessToken), undefined, 'her connection is untouched');
      t.notRegex(await landing(server, jar, clientId), /name="password"/, 'so is her sign-in');

      t.is((await admin(server, 'member', 'role', '--tenant', 'acme', '--email', 'multi@example.com', '--role', 'admin')).code, 0);
      const disabled = await admin(server, 'user', 'disable', '--email', 'Alice@Acme.example');
      t.is(disabled.code, 0, disabled.err);
      t.regex(disabled.out, /^disabled alice@acme\.example; ended 2 sign-in session\(s\); revoked 1 connection\(s\): .* → forge$/);
      t.is(await refusal(server, tokens.accessToken), 'connection_revoked: this connection was revoked');
      t.regex((await admin(server, 'user', 'list')).out, /^alice@acme\.example\s+acme:admin\s+disabled\s/m);
      t.is((await admin(server, 'user', 'disable', '--email', 'alice@acme.example')).out, 'alice@acme.example is already disabled');

      // Signed out, and the right password is refused as a wrong one is (the page tells nobody which accounts exist).
      const page = await landing(server, jar, clientId);
      t.regex(page, /name="password"/, 'the browser must sign in again');
      const attempt = await signIn(server, jar, page);
      t.is(attempt.status, 401);
      t.regex(await attempt.text(), /That email and password do not match an account\./);
      // A grant made behind the consent page's back is refused too: the account is read with every token.
      await db('users').where({ email: 'alice@acme.example' }).update({ disabled_at: null });
      const later = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
      await db('users').where({ email: 'alice@acme.example' }).update({ disabled_at: Date.now() });
      t.is(await refusal(server, later.accessToken), 'connection_revoked: the account behind this connection is disabled');

      const enabled = await admin(server, 'user', 'enable', '--email', 'alice@acme.example');
      t.is(enabled.out, 'enabled alice@acme.example', enabled.err);
      t.is((await admin(server, 'user', 'enable', '--email', 'alice@acme.example')).out, 'alice@acme.example is not disabled');
      t.is(await refusal(server, later.accessToken), undefined, 'a connection nobody revoked works again');
      t.is(await refusal(server, tokens.accessToken), 'connection_revoked: this connection was revoked', 'a revoked one stays revoked');
      t.regex((await follow(server.url, jar, await signIn(server, jar, await landing(server, jar, clientId)))).html!, /name="decision"/, 'she signs in again');

      const records = await db('audit_log').whereIn('name', ['user.disable', 'user.enable']).orderBy('time').select('name', 'args_redacted');
      t.deepEqual(records.map((r) => [r.name, JSON.parse(r.args_redacted)]), [
        ['user.disable', { email: 'alice@acme.example', revoked_connections: 1 }],
        ['user.enable', { email: 'alice@acme.example' }],
      ]);
      const unknown = await admin(server, 'user', 'disable', '--email', 'nobody@acme.example');
      t.is(unknown.code, 3);
      t.is(unknown.err, 'error: no user nobody@acme.example');
      const usage = await admin(server, 'user', 'disable');
      t.is(usage.code, 2);
      t.regex(usage.err, /^error: user disable needs --email\nusage: /);
    } finally {
      await server.close();
    }
  });
}

testOnEachDatabase('only enabled administrators count: a disabled one is no fallback, and one can leave without a conflict', async (t, database) => {
  const run = async (argv: string[], stdin = '') => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l), stdin: async () => stdin }, { DATABASE_URL: database.url });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  t.is((await run(['tenant', 'create', 'acme', '--name', 'Acme'])).code, 0);
  for (const email of ['a@acme.example', 'b@acme.example']) {
    t.is((await run(['user', 'add', '--tenant', 'acme', '--email', email, '--role', 'admin', '--password-stdin'], 'a long password\n')).code, 0);
  }
  t.regex((await run(['user', 'disable', '--email', 'a@acme.example'])).out, /^disabled a@acme\.example/);
  const lastEnabled = await run(['user', 'disable', '--email', 'b@acme.example']);
  t.is(lastEnabled.code, 1, 'b is the only administrator who can act');
  t.regex(lastEnabled.err, /last administrator/);
  const demote = await run(['member', 'role', '--tenant', 'acme', '--email', 'b@acme.example', '--role', 'member']);
  t.is(demote.code, 1);
  const removed = await run(['member', 'remove', '--tenant', 'acme', '--email', 'a@acme.example']);
  t.is(removed.code, 0, 'a disabled administrator leaving takes no acting administrator away');
  t.deepEqual((await database.db('users').whereNotNull('disabled_at').select('email')).map((u) => u.email), ['a@acme.example']);
  // a belongs to no organization now: what happens to her is recorded in the system log.
  t.is((await run(['user', 'enable', '--email', 'a@acme.example'])).code, 0);
  t.is((await run(['user', 'disable', '--email', 'a@acme.example'])).code, 0);
  const system = await database.db('audit_log').whereNull('tenant_id').whereIn('name', ['user.enable', 'user.disable']).orderBy('seq').select('name', 'args_redacted');
  t.deepEqual(system.map((r) => [r.name, JSON.parse(r.args_redacted)]), [
    ['user.enable', { email: 'a@acme.example' }],
    ['user.disable', { email: 'a@acme.example', revoked_connections: 0 }],
  ]);
});

for (const kind of databasesUnderTest()) {
  test(`the token endpoint issues nothing for a disabled account, even on a connection nothing revoked [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await authorizeWithPassword(server.url, { email: 'multi@example.com', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['openid', 'forge.chat.read'] });
      // A connection that escaped revocation (as one made behind the consent page's back would).
      await db('users').where({ email: 'multi@example.com' }).update({ disabled_at: Date.now() });
      const refused = await refresh(server.url, { refreshToken: tokens.refreshToken!, clientId: tokens.clientId, resource: server.forge }).then(() => 'refreshed', (error: Error) => error.message);
      t.regex(refused, /^refresh failed: 400 .*"error":"invalid_grant"/);
      await db('users').where({ email: 'multi@example.com' }).update({ disabled_at: null });
      t.truthy((await refresh(server.url, { refreshToken: tokens.refreshToken!, clientId: tokens.clientId, resource: server.forge })).accessToken, 'enabled again, it refreshes');
    } finally {
      await server.close();
    }
  });
}

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;

pgTest('a disable waiting for an organization\'s lock reads the roles again once it has it [postgres]', async (t) => {
  const database = await createMigratedDatabase('postgres');
  const { db } = database;
  try {
    const tenant = await createTenant(db, { slug: 'acme', name: 'Acme' });
    const a = await createUser(db, { email: 'a@acme.example', password: 'a long password' });
    const b = await createUser(db, { email: 'b@acme.example', password: 'a long password' });
    await addMembership(db, { userId: a.id, tenantId: tenant.id, role: 'member' });
    await addMembership(db, { userId: b.id, tenantId: tenant.id, role: 'admin' });
    // Another operator holds the organization (as member role does) while a, a member, is being disabled ...
    const other = await db.transaction();
    await lockTenant(other, tenant.id, 'update');
    const disabling = db.transaction((trx) => setUserDisabled(trx, a.id, true)).then((r) => r, (e: unknown) => e);
    t.true(await waitingFor(db, await backendOf(other)), 'the disable never waited for the organization');
    // ... and makes a the administrator in b's place, each step allowed on its own.
    await setMembershipRole(other, { userId: a.id, tenantId: tenant.id, role: 'admin' });
    await setMembershipRole(other, { userId: b.id, tenantId: tenant.id, role: 'member' });
    await other.commit();
    const result = await disabling;
    t.true(isAppError(result) && result.code === 'conflict', `a is now the last administrator: ${JSON.stringify(result)}`);
    t.is((await db('users').where({ id: a.id }).first()).disabled_at, null);
  } finally {
    await database.drop();
  }
});
