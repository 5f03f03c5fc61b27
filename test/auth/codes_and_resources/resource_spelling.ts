/**
 * A resource indicator is canonicalised (docs/auth.md: scheme and host lower case, no trailing
 * slash) at the authorization endpoint; the token endpoint must treat the same spellings as the
 * same resource: a code exchange or a refresh naming the canonical form (what the protected
 * resource metadata advertises) of a resource authorized in another spelling, or the other way
 * round, is the same resource, not `invalid_target`.
 */
import test from 'ava';
import { authenticateBearer } from '../../../db/grant_store.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, errorReturnOf, registerClient, startAuthorization, tokenRequest } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../../auth/support.js';

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

  test(`dot segments, encoded slashes, path case and a query never make a resource indicator name another resource than its URL [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const api = `${server.url}/api/mcp`;
      const { client_id: clientId } = await registerClient(server.url);
      const consoleScopes = ['console.connections.read'];
      for (const [resource, scopes, error] of [
        [`${api}/v1/..%2f..%2f..%2fmcp%2fforge`, ['forge.chat.read'], 'invalid_scope'], // an encoded slash is no separator: still the console
        [`${server.forge}%2f..%2f..%2fapi%2fmcp`, consoleScopes, 'invalid_target'],
        [`${server.forge}/..%2F..%2Fapi/mcp/v1/audit`, consoleScopes, 'invalid_target'],
        [`${server.url}/api/MCP/v1/connections`, consoleScopes, 'invalid_target'],
        [`${api}/v1/connections?tenant=globex`, consoleScopes, 'invalid_target'],
      ] as const) {
        const attempt = await startAuthorization(server.url, { clientId, resource, scopes: [...scopes] });
        t.is((await errorReturnOf(attempt.response)).searchParams.get('error'), error, resource);
      }

      // A console grant's tokens: a forge URL spelled as a console one climbs out with its dot segments.
      const scopes = ['console.audit.read'];
      const { code, clientId: consoleClient, redirectUri, verifier } = await authorizeCode(server.url, { ...alice, resource: `${api}/v1/audit`, scopes });
      const exchanged = await tokenRequest(server.url, { grant_type: 'authorization_code', code, client_id: consoleClient, redirect_uri: redirectUri, code_verifier: verifier, resource: `${api}/v1/%2e%2e/%2e%2e/%2e%2e/mcp/forge` });
      t.is(((await exchanged.json()) as { error: string }).error, 'invalid_target');
      const tokens = (await (await tokenRequest(server.url, { grant_type: 'authorization_code', code, client_id: consoleClient, redirect_uri: redirectUri, code_verifier: verifier, resource: `${api}/v1/connections/x` })).json()) as { access_token: string; refresh_token: string };
      t.is((await authenticateBearer(server.portico.context.db, tokens.access_token, api)).product, 'console');
      const climbing = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: consoleClient, resource: `${api}/v1/../../../mcp/forge` });
      t.is(((await climbing.json()) as { error: string }).error, 'invalid_target');
      const refreshed = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: consoleClient });
      t.is(refreshed.status, 200, 'the refused refresh spent nothing');
    } finally {
      await server.close();
    }
  });
}
