/**
 * A resource indicator is canonicalised (docs/auth.md: scheme and host lower case, no trailing
 * slash) at the authorization endpoint; the token endpoint must treat the same spellings as the
 * same resource: a code exchange or a refresh naming the canonical form (what the protected
 * resource metadata advertises) of a resource authorized in another spelling, or the other way
 * round, is the same resource, not `invalid_target`.
 */
import test from 'ava';
import { authenticateBearer } from '../../db/grant_store.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeCode, tokenRequest } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../auth/support.js';

const alice = { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme' };

for (const kind of databasesUnderTest()) {
  test(`a resource authorized with a trailing slash is refreshed and exchanged under its canonical form [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const upper = server.forge.replace('http://', 'HTTP://');
      for (const [authorizedAs, exchangedAs, refreshedAs] of [
        [`${server.forge}/`, server.forge, server.forge],
        [`${server.forge}/`, `${server.forge}/`, server.forge],
        [server.forge, `${server.forge}/`, upper],
        [upper, server.forge, `${server.forge}/`],
      ]) {
        const label = `authorized ${authorizedAs}, exchanged ${exchangedAs}, refreshed ${refreshedAs}`;
        const { code, clientId, redirectUri, verifier } = await authorizeCode(server.url, { ...alice, resource: authorizedAs, scopes: ['forge.chat.read'] });
        const exchanged = await tokenRequest(server.url, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, resource: exchangedAs });
        t.is(exchanged.status, 200, `${label}: ${await exchanged.clone().text()}`);
        if (exchanged.status !== 200) continue;
        const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
        t.is((await authenticateBearer(db, tokens.access_token, server.forge)).resource, server.forge, label);
        const refreshed = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId, resource: refreshedAs });
        t.is(refreshed.status, 200, `${label}: ${await refreshed.clone().text()}`);
        if (refreshed.status !== 200) continue;
        const fresh = (await refreshed.json()) as { access_token: string; refresh_token: string };
        const principal = await authenticateBearer(db, fresh.access_token, server.forge);
        t.is(principal.resource, server.forge, label);
        t.deepEqual([...principal.scopes], ['forge.chat.read'], label);
        // And a later refresh without any resource keeps working: nothing was taken for reuse.
        const again = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: fresh.refresh_token, client_id: clientId });
        t.is(again.status, 200, `${label}: ${await again.clone().text()}`);
      }
      // Another product is still another resource.
      const { code, clientId, redirectUri, verifier } = await authorizeCode(server.url, { ...alice, resource: `${server.forge}/`, scopes: ['forge.chat.read'] });
      const wrong = await tokenRequest(server.url, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, resource: `${server.aegis}/` });
      t.is(((await wrong.json()) as { error: string }).error, 'invalid_target');
    } finally {
      await server.close();
    }
  });
}
