/**
 * What outlives a process and what is cleaned up: a restart keeps signing keys, clients, grants
 * and tokens valid; expired rows and unused self-registered clients are purged; pre-registered
 * clients come from the admin CLI.
 */
import test from 'ava';
import { authenticateBearer } from '../../db/grant_store.js';
import { runAdmin } from '../../scripts/admin.js';
import { purgeExpired, purgeUnusedClients, UNUSED_CLIENT_DAYS } from '../../auth/adapter.js';
import { createTestDatabase, databasesUnderTest, testOnEachDatabase } from '../helpers/db.js';
import { authorizeCode, authorizeWithPassword, refresh, registerClient } from '../helpers/oauth.js';
import { freePort } from '../helpers/server.js';
import { PASSWORD, startAuthServer } from './support.js';

for (const kind of databasesUnderTest()) {
  test(`a restart keeps clients, grants and tokens valid [${kind}]`, async (t) => {
    const database = await createTestDatabase(kind);
    try {
      // The same public URL before and after, as in a real deployment.
      const port = await freePort();
      const env = { PORT: String(port), PUBLIC_AUTH_URL: `http://127.0.0.1:${port}` };
      const first = await startAuthServer(kind, { database, env });
      const tokens = await authorizeWithPassword(first.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: first.forge, scopes: ['forge.chat.read'] });
      const jwks = await (await fetch(`${first.url}/oauth/jwks`)).json();
      const spare = await registerClient(first.url);
      await first.stop();
      // A few turns of the event loop's I/O phase, so this process's fetch sees the FIN of its kept-alive
      // sockets to the stopped server before it picks one for the next request: the next start may
      // not yield to I/O at all (SQLite is synchronous), and a stale socket fails with "other side closed".
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));

      const second = await startAuthServer(kind, { database, env, seed: false });
      try {
        t.deepEqual(await (await fetch(`${second.url}/oauth/jwks`)).json(), jwks, 'the same signing keys');
        const { db } = second.portico.context;
        t.is(second.url, first.url);
        t.is((await authenticateBearer(db, tokens.accessToken, second.forge)).user.email, 'alice@acme.example', 'the access token still works');
        const rotated = await refresh(second.url, { refreshToken: tokens.refreshToken!, clientId: tokens.clientId, resource: second.forge });
        t.is((await authenticateBearer(db, rotated.accessToken, second.forge)).connectionId, (await authenticateBearer(db, tokens.accessToken, second.forge)).connectionId, 'the grant still works');
        const again = await authorizeWithPassword(second.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: second.forge, scopes: ['forge.chat.read'], clientId: spare.client_id });
        t.truthy(await authenticateBearer(db, again.accessToken, second.forge), 'a client registered before the restart still authorizes');
      } finally {
        await second.stop();
      }
    } finally {
      await database.drop();
    }
  });
}

testOnEachDatabase('expired rows and old unused self-registered clients are purged; used ones stay', async (t, { db }) => {
  const now = Date.now();
  const old = now - (UNUSED_CLIENT_DAYS + 1) * 86_400_000;
  const row = (model: string, id: string, extra: Record<string, unknown> = {}) => ({ model, id, payload: '{}', ...extra });
  await db('tenants').insert({ id: 't1', slug: 'acme', name: 'Acme', created_at: now });
  await db('users').insert({ id: 'u1', email: 'a@acme.example', password_hash: 'x', created_at: now });
  await db('oidc_payloads').insert([
    row('AccessToken', 'expired', { expires_at: now - 1 }),
    row('AccessToken', 'live', { expires_at: now + 60_000 }),
    row('Client', 'dcr_old_unused', { client_id: 'dcr_old_unused', created_at: old }),
    row('RegistrationAccessToken', 'rat', { client_id: 'dcr_old_unused', created_at: old }),
    row('Client', 'dcr_old_with_grant', { client_id: 'dcr_old_with_grant', created_at: old }),
    row('Grant', 'g1', { client_id: 'dcr_old_with_grant', expires_at: now + 60_000 }),
    row('Client', 'dcr_old_connected', { client_id: 'dcr_old_connected', created_at: old }),
    row('Client', 'dcr_new', { client_id: 'dcr_new', created_at: now }),
    row('Client', 'reg_old', { client_id: 'reg_old', created_at: old }),
  ]);
  await db('connections').insert({ id: 'c1', grant_id: 'gone', tenant_id: 't1', user_id: 'u1', client_id: 'dcr_old_connected', client_kind: 'dynamic', product: 'forge', resource: 'r', scopes: 's', created_at: now, call_count: 0 });
  t.is(await purgeExpired(db, now), 1);
  t.is(await purgeUnusedClients(db, now), 1);
  const left = (await db('oidc_payloads').orderBy('id').select('id')).map((r: { id: string }) => r.id);
  t.deepEqual(left, ['dcr_new', 'dcr_old_connected', 'dcr_old_with_grant', 'g1', 'live', 'reg_old']);
});

testOnEachDatabase("an expired grant's row is purged only once its connection has ended", async (t, { db }) => {
  const now = Date.now();
  await db('tenants').insert({ id: 't1', slug: 'acme', name: 'Acme', created_at: now });
  await db('users').insert({ id: 'u1', email: 'a@acme.example', password_hash: 'x', created_at: now });
  const connection = { tenant_id: 't1', user_id: 'u1', client_id: 'dcr_c', client_kind: 'dynamic', product: 'forge', resource: 'r', scopes: 's', created_at: now, call_count: 0 };
  // Two grants past their lifetime: one whose connection was ended, one whose end a purge run
  // has not made yet (its grant expired after that run looked).
  await db('oidc_payloads').insert([
    { model: 'Grant', id: 'g_ended', payload: '{}', client_id: 'dcr_c', expires_at: now - 1 },
    { model: 'Grant', id: 'g_live', payload: '{}', client_id: 'dcr_c', expires_at: now - 1 },
  ]);
  await db('connections').insert([{ ...connection, id: 'c_ended', grant_id: 'g_ended', revoked_at: now }, { ...connection, id: 'c_live', grant_id: 'g_live' }]);
  t.is(await purgeExpired(db, now), 1);
  t.deepEqual(await db('oidc_payloads').pluck('id'), ['g_live'], 'the grant whose connection is live stays for endExpiredGrants to find');
  await db('connections').where({ id: 'c_live' }).update({ revoked_at: now });
  t.is(await purgeExpired(db, now), 1);
  t.deepEqual(await db('oidc_payloads').pluck('id'), []);
});

function cli(url: string, argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  return runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l), stdin: async () => '' }, { DATABASE_URL: url }).then((code) => ({ code, out: out.join('\n'), err: err.join('\n') }));
}

for (const kind of databasesUnderTest()) {
  test(`admin CLI: client add registers a client that completes the flow; bad input writes nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const url = server.database.url;
      const added = await cli(url, ['client', 'add', '--name', 'Acme Assistant', '--redirect-uri', 'http://127.0.0.1/callback', '--redirect-uri', 'cursor://acme/cb']);
      t.is(added.code, 0, added.err);
      const clientId = /client_id: (reg_[\w-]+)/.exec(added.out)![1];
      t.regex(added.out, /token_endpoint_auth_method: none/);
      const tokens = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'], clientId, redirectUri: 'http://127.0.0.1:3000/callback' });
      t.is((await authenticateBearer(server.portico.context.db, tokens.accessToken, server.forge)).clientName, 'Acme Assistant');

      const confidential = await cli(url, ['client', 'add', '--name', 'Back office', '--redirect-uri', 'https://backoffice.acme.example/cb', '--confidential']);
      t.is(confidential.code, 0, confidential.err);
      t.regex(confidential.out, /client_secret: [\w-]{43}/);
      t.regex(confidential.out, /token_endpoint_auth_method: client_secret_basic/);

      const backOffice = /client_id: (reg_[\w-]+)/.exec(confidential.out)![1];
      const secret = /client_secret: ([\w-]+)/.exec(confidential.out)![1];
      const code = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'], clientId: backOffice, redirectUri: 'https://backoffice.acme.example/cb' });
      const exchange = (authorization?: string) => fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: code.code, redirect_uri: code.redirectUri, code_verifier: code.verifier, client_id: backOffice }),
      });
      const unauthenticated = await exchange();
      t.is(((await unauthenticated.json()) as { error: string }).error, 'invalid_client', 'a confidential client must authenticate');
      const authenticated = await exchange(`Basic ${Buffer.from(`${backOffice}:${secret}`).toString('base64')}`);
      t.is(authenticated.status, 200);

      const listed = await cli(url, ['client', 'list']);
      t.regex(listed.out, /Acme Assistant\s+registered\s+none/);
      t.regex(listed.out, /Back office\s+registered\s+client_secret_basic/);

      const before = await server.portico.context.db('oidc_payloads').where({ model: 'Client' }).count<{ n: number }[]>({ n: '*' });
      // A refused value fails (1); a missing option is a usage error (2, with the usage line).
      for (const [argv, code] of [
        [['client', 'add', '--name', 'Bad', '--redirect-uri', 'http://evil.example/cb'], 1],
        [['client', 'add', '--name', 'Bad', '--redirect-uri', 'javascript:alert(1)'], 1],
        [['client', 'add', '--redirect-uri', 'https://x.example/cb'], 2],
        [['client', 'add', '--name', 'Bad'], 2],
      ] as const) {
        const result = await cli(url, [...argv]);
        t.is(result.code, code, argv.join(' '));
        t.regex(result.err, /^error: /, argv.join(' '));
        if (code === 2) t.regex(result.err, /\nusage: npm run admin -- client add/, argv.join(' '));
      }
      t.deepEqual(await server.portico.context.db('oidc_payloads').where({ model: 'Client' }).count<{ n: number }[]>({ n: '*' }), before);
    } finally {
      await server.close();
    }
  });
}
