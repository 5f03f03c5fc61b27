/**
 * "A connection lasts 90 days from consent (its grant's lifetime), then ends as a revocation does"
 * (README). An access token issued shortly before the grant's end must not outlive it: its
 * lifetime is capped at what is left of the grant, so the MCP servers refuse it as soon as the
 * connection's time is up, not an hour later (or at the next purge, up to 10 minutes later).
 */
import test from 'ava';
import { endExpiredGrants } from '../../../auth/revocation.js';
import { TTL } from '../../../auth/lifetimes.js';
import { authenticateBearer } from '../../../db/grant_store.js';
import { isAppError } from '../../../shared/errors.js';
import { EventBus } from '../../../shared/events.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeWithPassword, tokenRequest } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../../auth/support.js';

const alice = { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme' };

for (const kind of databasesUnderTest()) {
  test(`an access token refreshed just before the grant ends does not outlive the grant [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await authorizeWithPassword(server.url, { ...alice, resource: server.forge, scopes: ['forge.chat.read'] });
      const principal = await authenticateBearer(db, tokens.accessToken, server.forge);
      // Fast-forward the grant to 3 seconds before the end of its 90 days (row and payload, as the provider stores them).
      const endsAt = Math.floor(Date.now() / 1000) + 3;
      const row = await db('oidc_payloads').where({ model: 'Grant', id: principal.grantId }).first('payload');
      await db('oidc_payloads').where({ model: 'Grant', id: principal.grantId })
        .update({ expires_at: endsAt * 1000, payload: JSON.stringify({ ...JSON.parse(row.payload), exp: endsAt }) });

      const refreshed = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId });
      t.is(refreshed.status, 200, await refreshed.clone().text());
      const fresh = (await refreshed.json()) as { access_token: string; expires_in: number };
      t.true(fresh.expires_in <= 3, `expires_in ${fresh.expires_in} reaches past the grant's end`);
      t.truthy(await authenticateBearer(db, fresh.access_token, server.forge));

      await new Promise((resolve) => setTimeout(resolve, endsAt * 1000 - Date.now() + 1000)); // until the grant has ended by the server's clock
      const after = await authenticateBearer(db, fresh.access_token, server.forge).catch((e: unknown) => e);
      t.true(isAppError(after) && (after.code === 'invalid_token' || after.code === 'connection_revoked'), `the token still works after the connection's end: ${JSON.stringify(after)}`);
    } finally {
      await server.close();
    }
  });

  test(`a connection past a grant's lifetime whose grant row an earlier purge deleted is ended too, once [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const old = await authorizeWithPassword(server.url, { ...alice, resource: server.forge, scopes: ['forge.chat.read'] });
      const young = await authorizeWithPassword(server.url, { ...alice, resource: server.forge, scopes: ['forge.chat.read'] });
      const connectionOf = async (accessToken: string) => db('connections').where({ grant_id: (await authenticateBearer(db, accessToken, server.forge)).grantId }).first();
      const [aged, recent] = [await connectionOf(old.accessToken), await connectionOf(young.accessToken)];
      // As a version before this one left things: the grant's row purged, the connection still live.
      await db('connections').where({ id: aged.id }).update({ created_at: Date.now() - TTL.Grant * 1000 - 60_000 });
      await db('oidc_payloads').where({ model: 'Grant' }).whereIn('id', [aged.grant_id, recent.grant_id]).delete();

      const bus = new EventBus();
      await endExpiredGrants(db, bus);
      await endExpiredGrants(db, bus);
      const after = await db('connections').whereIn('id', [aged.id, recent.id]).orderBy('created_at');
      t.truthy(after.find((c: { id: string }) => c.id === aged.id)?.revoked_at, 'the orphaned connection is ended');
      t.falsy(after.find((c: { id: string }) => c.id === recent.id)?.revoked_at, 'a younger one (its grant row gone a moment before a revocation ends it) is left alone');
      const records = await db('audit_log').where({ name: 'grant.revoke', connection_id: aged.id });
      t.is(records.length, 1);
      t.is(JSON.parse(records[0].args_redacted).reason, 'grant_expired');
    } finally {
      await server.close();
    }
  });
}
