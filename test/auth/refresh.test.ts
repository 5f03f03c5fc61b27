/**
 * Refresh tokens of public clients (checklist D1-D3, D5): rotation on every use; reuse of a
 * rotated token after the grace window revokes the whole grant and its connection; two parallel
 * refreshes of one token (or a retry inside the grace window) get one answer, the same tokens,
 * so there are never two token chains (auth/refresh_repeat.ts).
 */
import { request } from 'node:http';
import test from 'ava';
import { authenticateBearer, findConnectionByGrant, hashTokenId, revokeConnection } from '../../db/grant_store.js';
import { isAppError } from '../../shared/errors.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeWithPassword, refresh, registerClient, tokenRequest } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer, type AuthServer } from './support.js';

function tokensFor(server: AuthServer) {
  return authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'] });
}

interface TokenBody {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** A refresh sent from another loopback address (Linux routes all of 127/8 to lo). */
function refreshFrom(localAddress: string, server: AuthServer, refreshToken: string, clientId: string): Promise<{ status: number; body: { error?: string } }> {
  const body = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }).toString();
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/oauth/token`, { method: 'POST', localAddress, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject).end(body);
  });
}

function refreshRequest(server: AuthServer, refreshToken: string, clientId: string) {
  return tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
}

for (const kind of databasesUnderTest()) {
  test(`reuse of a rotated refresh token revokes the grant and marks the connection revoked [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { auth: { refreshReuseGraceMs: 0 } });
    try {
      const { db } = server.portico.context;
      const first = await tokensFor(server);
      const second = await refresh(server.url, { refreshToken: first.refreshToken!, clientId: first.clientId });
      const principal = await authenticateBearer(db, second.accessToken, server.forge);

      const reused = await refreshRequest(server, first.refreshToken!, first.clientId);
      t.is(reused.status, 400);
      t.is(((await reused.json()) as { error: string }).error, 'invalid_grant');

      const current = await refreshRequest(server, second.refreshToken!, first.clientId);
      t.is(current.status, 400, 'the newest refresh token died with the grant');
      for (const token of [first.accessToken, second.accessToken]) {
        const error = await authenticateBearer(db, token, server.forge).catch((e: unknown) => e);
        t.true(isAppError(error) && error.code === 'connection_revoked');
      }
      const connection = await findConnectionByGrant(db, principal.grantId);
      t.truthy(connection?.revoked_at);
      const audit = await db('audit_log').where({ name: 'grant.revoke', connection_id: principal.connectionId });
      t.is(audit.length, 1);
      t.is(JSON.parse(audit[0].args_redacted).reason, 'refresh_token_reuse');
      t.deepEqual(server.published, [{ type: 'connection.revoked', connectionId: principal.connectionId, grantId: principal.grantId }]);
    } finally {
      await server.close();
    }
  });

  test(`two parallel refreshes of one token get one answer: one rotation, one chain, a working connection [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await tokensFor(server);
      const answers = await Promise.all([refreshRequest(server, tokens.refreshToken!, tokens.clientId), refreshRequest(server, tokens.refreshToken!, tokens.clientId)]);
      t.deepEqual(answers.map((a) => a.status), [200, 200]);
      const [a, b] = (await Promise.all(answers.map((r) => r.json()))) as TokenBody[];
      t.is(a.refresh_token, b.refresh_token, 'the same refresh token: one chain');
      t.is(a.access_token, b.access_token);
      t.not(a.refresh_token, tokens.refreshToken);

      // A repeat after both answers (a retry after a lost response), inside the grace window.
      const late = await refreshRequest(server, tokens.refreshToken!, tokens.clientId);
      t.is(late.status, 200);
      const again = (await late.json()) as TokenBody;
      t.is(again.refresh_token, a.refresh_token);
      t.true(again.expires_in <= a.expires_in);

      const principal = await authenticateBearer(db, a.access_token, server.forge);
      const live = await db('oidc_payloads').where({ model: 'RefreshToken', grant_id: principal.grantId }).whereNull('consumed_at');
      t.is(live.length, 1, 'one live refresh token for the grant');
      t.falsy((await findConnectionByGrant(db, principal.grantId))?.revoked_at, 'the connection survives');
      t.truthy(await authenticateBearer(db, tokens.accessToken, server.forge), 'the earlier access token still works');
      const next = await refresh(server.url, { refreshToken: a.refresh_token, clientId: tokens.clientId });
      t.truthy(await authenticateBearer(db, next.accessToken, server.forge));
      t.deepEqual(server.published, []);
    } finally {
      await server.close();
    }
  });

  test(`the stored answer for repeats holds no usable token [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await tokensFor(server);
      const answer = (await (await refreshRequest(server, tokens.refreshToken!, tokens.clientId)).json()) as TokenBody;
      const row = await db('oidc_payloads').where({ model: 'RefreshToken', id: hashTokenId(tokens.refreshToken!) }).first();
      t.truthy(row?.successor, 'the rotated token\'s row holds the sealed answer');
      const everything = JSON.stringify(await db('oidc_payloads').select());
      for (const token of [answer.access_token, answer.refresh_token, tokens.refreshToken!]) t.false(everything.includes(token));
    } finally {
      await server.close();
    }
  });

  test(`a repeat that differs from the refresh it repeats is refused and the connection lives [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await tokensFor(server);
      const first = (await (await refreshRequest(server, tokens.refreshToken!, tokens.clientId)).json()) as TokenBody;

      const narrower = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId, scope: 'forge.chat.read' });
      t.is(narrower.status, 400, 'other parameters');
      t.is(((await narrower.json()) as { error: string }).error, 'invalid_grant');
      const other = await registerClient(server.url);
      const foreign = await refreshRequest(server, tokens.refreshToken!, other.client_id);
      t.is(((await foreign.json()) as { error: string }).error, 'invalid_grant', 'another client');
      const elsewhere = await refreshFrom('127.0.0.2', server, tokens.refreshToken!, tokens.clientId);
      t.is(elsewhere.status, 400, 'another address');
      t.is(elsewhere.body.error, 'invalid_grant');

      t.truthy(await authenticateBearer(db, first.access_token, server.forge), 'the connection lives');
      t.deepEqual(server.published, []);
    } finally {
      await server.close();
    }
  });

  test(`a repeat inside the grace window is refused once the connection is revoked [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await tokensFor(server);
      const first = (await (await refreshRequest(server, tokens.refreshToken!, tokens.clientId)).json()) as TokenBody;
      const { grantId } = await authenticateBearer(db, first.access_token, server.forge);
      await db.transaction(async (trx) => revokeConnection(trx, (await findConnectionByGrant(trx, grantId))!, { reason: 'test' }));

      const repeat = await refreshRequest(server, tokens.refreshToken!, tokens.clientId);
      t.is(repeat.status, 400);
      t.is(((await repeat.json()) as { error: string }).error, 'invalid_grant');
    } finally {
      await server.close();
    }
  });

  test(`a refresh token works only for its own client, and revoking it at /oauth/revoke ends the connection [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await tokensFor(server);
      const other = await registerClient(server.url);
      const stolen = await refreshRequest(server, tokens.refreshToken!, other.client_id);
      t.is(((await stolen.json()) as { error: string }).error, 'invalid_grant');
      t.truthy(await authenticateBearer(db, tokens.accessToken, server.forge), 'a foreign client presenting it does not revoke anything');

      const revoked = await fetch(`${server.url}/oauth/revoke`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: tokens.refreshToken!, token_type_hint: 'refresh_token', client_id: tokens.clientId }),
      });
      t.is(revoked.status, 200);
      const error = await authenticateBearer(db, tokens.accessToken, server.forge).catch((e: unknown) => e);
      t.true(isAppError(error) && error.code === 'connection_revoked');
      const audit = await db('audit_log').where({ name: 'grant.revoke' }).first();
      t.is(JSON.parse(audit.args_redacted).reason, 'revoked_by_client');
    } finally {
      await server.close();
    }
  });
}

// SQLite only: the column is renamed to make reading the stored answers fail. On PostgreSQL the
// rename would also break the pool's cached statements that the refresh itself runs.
test('a repeat whose first answer cannot be read is refused invalid_grant in the token endpoint\'s own shape, and the connection lives [sqlite]', async (t) => {
  const server = await startAuthServer('sqlite');
  try {
    const { db } = server.portico.context;
    const tokens = await tokensFor(server);
    // Storing the first refresh's answer and reading it for the repeat both fail.
    await db.schema.alterTable('oidc_payloads', (table) => table.renameColumn('successor', 'successor_unreadable'));
    const first = await refreshRequest(server, tokens.refreshToken!, tokens.clientId);
    t.is(first.status, 200, 'the refresh does not depend on storing its answer');
    const { access_token: accessToken } = (await first.json()) as TokenBody;

    const repeat = await refreshRequest(server, tokens.refreshToken!, tokens.clientId);
    t.is(repeat.status, 400);
    const refusal = (await repeat.json()) as Record<string, unknown>;
    t.is(refusal.error, 'invalid_grant', JSON.stringify(refusal));
    t.truthy(await authenticateBearer(db, accessToken, server.forge), 'the connection lives');
    t.true(server.logs.some((line) => /a repeated refresh could not read/.test(line)), 'the failure is logged');
  } finally {
    await server.close();
  }
});
