/**
 * The refresh-token grace window as deployed (docs/auth.md: 10 s, notes §2.5): with the default
 * mounts, a rotated refresh token used again within 10 s of its rotation gets the rotation's
 * answer and the connection lives (two parallel refreshes, a retry; auth/refresh_repeat.ts); used
 * again later it is reuse, which revokes the grant and the connection. The other refresh tests shorten the window or race inside it, so a
 * default of an hour (reuse detection off for an hour) or of nothing passed them.
 */
import test from 'ava';
import { authenticateBearer, findConnectionByGrant, hashTokenId } from '../../db/grant_store.js';
import { isAppError } from '../../shared/errors.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeWithPassword, refresh, tokenRequest } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer, type AuthServer } from './support.js';

function tokensFor(server: AuthServer) {
  return authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'] });
}

/** Moves the moment a refresh token was rotated `ms` into the past. */
async function rotatedAgo(server: AuthServer, refreshToken: string, ms: number): Promise<void> {
  const changed = await server.portico.context.db('oidc_payloads').where({ model: 'RefreshToken', id: hashTokenId(refreshToken) }).whereNotNull('consumed_at').update({ consumed_at: Date.now() - ms });
  if (changed !== 1) throw new Error('the refresh token was not rotated');
}

for (const kind of databasesUnderTest()) {
  test(`with the default grace window, a rotated refresh token reused within 10 s gets the same answer and the connection lives; after 10 s the reuse revokes it [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const first = await tokensFor(server);
      const second = await refresh(server.url, { refreshToken: first.refreshToken!, clientId: first.clientId });
      const principal = await authenticateBearer(db, second.accessToken, server.forge);

      await rotatedAgo(server, first.refreshToken!, 8_000);
      const early = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: first.refreshToken!, client_id: first.clientId });
      t.is(early.status, 200);
      const repeated = (await early.json()) as { access_token: string; refresh_token: string };
      t.deepEqual([repeated.access_token, repeated.refresh_token], [second.accessToken, second.refreshToken], 'the rotation\'s own tokens, not a second chain');
      t.truthy(await authenticateBearer(db, second.accessToken, server.forge), 'inside the window the connection lives');
      t.falsy((await findConnectionByGrant(db, principal.grantId))?.revoked_at);

      await rotatedAgo(server, first.refreshToken!, 12_000);
      const late = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: first.refreshToken!, client_id: first.clientId });
      t.is(late.status, 400);
      t.is(((await late.json()) as { error: string }).error, 'invalid_grant');
      const error = await authenticateBearer(db, second.accessToken, server.forge).catch((e: unknown) => e);
      t.true(isAppError(error) && error.code === 'connection_revoked', 'past the window the reuse revokes the connection');
      t.truthy((await findConnectionByGrant(db, principal.grantId))?.revoked_at);
      const audit = await db('audit_log').where({ name: 'grant.revoke', connection_id: principal.connectionId });
      t.is(audit.length, 1);
      t.is(JSON.parse(audit[0].args_redacted).reason, 'refresh_token_reuse');
    } finally {
      await server.close();
    }
  });
}
