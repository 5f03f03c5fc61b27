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
import { until } from '../helpers/poll.js';
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

  test(`a rotated refresh token's row holds the sealed answer while the grace window lasts, and not after it [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { auth: { purgeIntervalMs: 100 } });
    try {
      const { db } = server.portico.context;
      const first = await tokensFor(server);
      const second = await refresh(server.url, { refreshToken: first.refreshToken!, clientId: first.clientId });
      const rotatedRow = () => db('oidc_payloads').where({ model: 'RefreshToken', id: hashTokenId(first.refreshToken!) }).first('consumed_at', 'successor');

      // A purge has run (an expired row is gone) and left the answer of a rotation inside its window.
      await db('oidc_payloads').insert({ model: 'Session', id: 'purge-marker', payload: '{}', expires_at: Date.now() - 1, created_at: Date.now() });
      t.true(await until(5_000, async () => ((await db('oidc_payloads').where({ id: 'purge-marker' }).first()) ? undefined : true)), 'the purge ran');
      t.truthy((await rotatedRow())?.successor);
      const repeat = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: first.refreshToken!, client_id: first.clientId });
      t.is(((await repeat.json()) as { refresh_token?: string }).refresh_token, second.refreshToken);

      // Past the window the answer only served someone holding an old refresh token and a copy of
      // the database: it opens the next refresh token, whose row opens the one after, up to the live one.
      await rotatedAgo(server, first.refreshToken!, 12_000);
      t.true(await until(5_000, async () => ((await rotatedRow())?.successor === null ? true : undefined)), 'the answer is erased');
      t.truthy((await rotatedRow())?.consumed_at, 'the row stays, for reuse detection');
    } finally {
      await server.close();
    }
  });

  test(`the sealed answer is erased as its grace window ends, without waiting for the purge [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { auth: { refreshReuseGraceMs: 500 } });
    try {
      const { db } = server.portico.context;
      const first = await tokensFor(server);
      await refresh(server.url, { refreshToken: first.refreshToken!, clientId: first.clientId });
      const rotatedRow = () => db('oidc_payloads').where({ model: 'RefreshToken', id: hashTokenId(first.refreshToken!) }).first('consumed_at', 'successor');
      t.truthy((await rotatedRow())?.successor, 'inside the window');
      t.true(await until(5_000, async () => ((await rotatedRow())?.successor === null ? true : undefined)), 'the answer is erased');
      t.truthy((await rotatedRow())?.consumed_at, 'the row stays, for reuse detection');
    } finally {
      await server.close();
    }
  });
}
