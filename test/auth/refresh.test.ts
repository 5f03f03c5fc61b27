/**
 * Refresh tokens of public clients (checklist D1-D3, D5): rotation on every use; reuse of a
 * rotated token after the grace window revokes the whole grant and its connection; two parallel
 * refreshes of one token leave a working connection and never two token chains.
 */
import test from 'ava';
import { authenticateBearer, findConnectionByGrant } from '../../db/grant_store.js';
import { isAppError } from '../../shared/errors.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeWithPassword, refresh, registerClient, tokenRequest } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer, type AuthServer } from './support.js';

function tokensFor(server: AuthServer) {
  return authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'] });
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

  test(`two parallel refreshes of one token both leave a working connection [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await tokensFor(server);
      const [a, b] = await Promise.all([refreshRequest(server, tokens.refreshToken!, tokens.clientId), refreshRequest(server, tokens.refreshToken!, tokens.clientId)]);
      const results = [{ status: a.status, body: (await a.json()) as Record<string, string> }, { status: b.status, body: (await b.json()) as Record<string, string> }];
      const winners = results.filter((r) => r.status === 200);
      t.is(winners.length, 1, `statuses ${results.map((r) => r.status).join(',')}: exactly one rotation, never two chains`);
      const loser = results.find((r) => r.status !== 200)!;
      t.is(loser.body.error, 'invalid_grant');

      // The slower of two refreshes often arrives after the first one rotated (two windows, a retry
      // after a lost response): inside the grace window that is refused, not treated as theft.
      const late = await refreshRequest(server, tokens.refreshToken!, tokens.clientId);
      t.is(late.status, 400);
      t.is(((await late.json()) as { error: string }).error, 'invalid_grant');

      const principal = await authenticateBearer(db, winners[0].body.access_token, server.forge);
      t.falsy((await findConnectionByGrant(db, principal.grantId))?.revoked_at, 'the connection survives');
      t.truthy(await authenticateBearer(db, tokens.accessToken, server.forge), 'the earlier access token still works');
      const next = await refresh(server.url, { refreshToken: winners[0].body.refresh_token, clientId: tokens.clientId });
      t.truthy(await authenticateBearer(db, next.accessToken, server.forge));
      t.deepEqual(server.published, []);
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
