/**
 * The whole flow with a client nobody here wrote (openid-client): discovery, dynamic
 * registration, authorization with PKCE S256 and a resource indicator, sign-in and consent over
 * HTTP, code exchange (with RFC 9207 `iss` checked by the client), refresh with rotation.
 */
import test from 'ava';
import * as client from 'openid-client';
import { authenticateBearer, findConnectionByGrant } from '../../../db/grant_store.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { CookieJar, follow, parseForm, postForm, consent } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`openid-client: discovery, registration, PKCE + resource, sign-in, consent, code exchange, refresh rotation [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const redirectUri = 'http://127.0.0.1/callback';
      const config = await client.dynamicClientRegistration(
        new URL(server.url),
        { client_name: 'openid-client test', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
        client.None(),
        { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
      );

      const metadata = config.serverMetadata();
      t.is(metadata.issuer, server.url);
      t.is(metadata.authorization_endpoint, `${server.url}/oauth/authorize`);
      t.is(metadata.token_endpoint, `${server.url}/oauth/token`);
      t.is(metadata.registration_endpoint, `${server.url}/oauth/register`);
      t.is(metadata.revocation_endpoint, `${server.url}/oauth/revoke`);
      t.is(metadata.introspection_endpoint, `${server.url}/oauth/introspect`);
      t.is(metadata.jwks_uri, `${server.url}/oauth/jwks`);
      t.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
      t.deepEqual(metadata.response_types_supported, ['code']);
      t.true(metadata.authorization_response_iss_parameter_supported);
      t.is(metadata.client_id_metadata_document_supported, true);
      t.deepEqual(
        [...(metadata.scopes_supported ?? [])].sort(),
        ['aegis.scans.read', 'console.audit.read', 'console.connections.read', 'console.connections.write', 'email', 'forge.chat.read', 'forge.chat.write', 'offline_access', 'openid'],
      );
      t.false((metadata.grant_types_supported ?? []).includes('implicit'));
      t.false((metadata.grant_types_supported ?? []).includes('password'));

      const registered = config.clientMetadata();
      t.regex(registered.client_id, /^dcr_/);
      t.is(registered.token_endpoint_auth_method, 'none');
      t.is(registered.client_secret, undefined);
      t.is(registered.registration_client_uri, `${server.url}/oauth/register/${registered.client_id}`);

      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const authorizationUrl = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri, scope: 'forge.chat.read forge.chat.write', resource: server.forge,
        code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state,
      });

      // The browser part: sign-in page, then consent page, then the redirect to the client.
      const jar = new CookieJar();
      const signInPage = await follow(server.url, jar, await jar.fetch(authorizationUrl.href));
      t.regex(signInPage.url, /\/oauth\/interaction\/[\w-]+$/);
      const login = parseForm(signInPage.html!);
      const consentPage = await follow(server.url, jar, await postForm(server.url, jar, login.action, [['csrf', login.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
      t.regex(consentPage.html!, /Allow openid-client test to use Forge\?/);
      const redirected = await consent(server.url, jar, consentPage.html!, { tenant: 'acme' });
      t.true(redirected.url.startsWith(`${redirectUri}?`));
      t.is(new URL(redirected.url).searchParams.get('iss'), server.url);

      const tokens = await client.authorizationCodeGrant(config, new URL(redirected.url), { pkceCodeVerifier: verifier, expectedState: state }, { resource: server.forge });
      t.is(tokens.token_type.toLowerCase(), 'bearer');
      t.is(tokens.scope, 'forge.chat.read forge.chat.write');
      t.is(tokens.expires_in, 3600);
      t.truthy(tokens.refresh_token);

      const { db } = server.portico.context;
      const principal = await authenticateBearer(db, tokens.access_token, server.forge);
      t.is(principal.tenant.slug, 'acme');
      t.is(principal.user.email, 'alice@acme.example');
      t.is(principal.product, 'forge');
      t.is(principal.clientId, registered.client_id);
      t.deepEqual([...principal.scopes].sort(), ['forge.chat.read', 'forge.chat.write']);
      const connection = await findConnectionByGrant(db, principal.grantId);
      t.like(connection, { tenant_id: server.tenants.acme.id, user_id: server.users.alice.id, client_kind: 'dynamic', client_name: 'openid-client test', product: 'forge', resource: server.forge, scopes: 'forge.chat.read forge.chat.write' });
      const audit = await db('audit_log').where({ name: 'consent.grant' }).first();
      t.like(audit, { tenant_id: server.tenants.acme.id, user_id: server.users.alice.id, client_id: registered.client_id, connection_id: connection!.id, kind: 'auth', outcome: 'ok' });

      // Refresh rotates: a new refresh token, a new access token on the same connection.
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      t.truthy(refreshed.refresh_token);
      t.not(refreshed.refresh_token, tokens.refresh_token);
      t.not(refreshed.access_token, tokens.access_token);
      const again = await authenticateBearer(db, refreshed.access_token, server.forge);
      t.is(again.connectionId, principal.connectionId);
      const twice = await client.refreshTokenGrant(config, refreshed.refresh_token!);
      t.not(twice.refresh_token, refreshed.refresh_token);

      // The stored rows never contain a token (notes §2.5: hashed ids, no jti).
      const rows = await db('oidc_payloads').select('id', 'payload');
      const dump = JSON.stringify(rows);
      for (const secret of [tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!]) t.false(dump.includes(secret));
    } finally {
      await server.close();
    }
  });
}
