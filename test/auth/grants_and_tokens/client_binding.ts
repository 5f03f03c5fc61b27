/**
 * Tokens and codes are bound to the client they were issued to (RFC 7009 §2.1, RFC 7662 §2.1,
 * docs/auth.md "Endpoints"): another client can neither revoke a connection's tokens at
 * /oauth/revoke (which for a refresh token would end the connection), nor read them at
 * /oauth/introspect, nor learn anything about a code from the token endpoint's code guard
 * (guardCodeResource answers only an exchange that would otherwise succeed: the code's own client
 * and redirect URI, docs/auth.md "Protections").
 */
import test from 'ava';
import { authenticateBearer, findConnectionByGrant } from '../../../db/grant_store.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, authorizeWithPassword, refresh, registerClient, tokenRequest } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer, type AuthServer } from '../support.js';

const scopes = ['forge.chat.read'];

function tokensFor(server: AuthServer) {
  return authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
}

function form(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
}

for (const kind of databasesUnderTest()) {
  test(`another client can neither revoke nor introspect a connection's tokens [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await tokensFor(server);
      const principal = await authenticateBearer(db, tokens.accessToken, server.forge);
      const other = await registerClient(server.url);

      for (const [token, hint] of [[tokens.refreshToken!, 'refresh_token'], [tokens.accessToken, 'access_token']]) {
        const revoked = await form(`${server.url}/oauth/revoke`, { token, token_type_hint: hint, client_id: other.client_id });
        t.not(revoked.status, 500, hint);
      }
      t.falsy((await findConnectionByGrant(db, principal.grantId))?.revoked_at, 'the connection lives');
      t.truthy(await authenticateBearer(db, tokens.accessToken, server.forge), 'the access token still works');
      const next = await refresh(server.url, { refreshToken: tokens.refreshToken!, clientId: tokens.clientId });
      t.truthy(next.accessToken, 'the refresh token still works for its own client');
      t.is(await db('audit_log').where({ name: 'grant.revoke' }).count({ n: '*' }).first().then((row) => Number(row?.n)), 0);

      const introspected = await form(`${server.url}/oauth/introspect`, { token: next.accessToken, client_id: other.client_id });
      const body = (await introspected.json()) as Record<string, unknown>;
      t.is(body.active, false, 'another client learns nothing of the token');
      t.is(body.tenant_id, undefined);
      t.is(body.scope, undefined);
      const own = (await (await form(`${server.url}/oauth/introspect`, { token: next.accessToken, client_id: tokens.clientId })).json()) as Record<string, unknown>;
      t.is(own.active, true, 'its own client may introspect it');
    } finally {
      await server.close();
    }
  });

  test(`a code presented by another client, or with another redirect URI, is invalid_grant whatever resource it names, and stays usable [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const code = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
      const other = await registerClient(server.url, { redirect_uris: [code.redirectUri] });
      for (const resource of [server.aegis, server.forge]) {
        const stolen = await tokenRequest(server.url, {
          grant_type: 'authorization_code', code: code.code, client_id: other.client_id, redirect_uri: code.redirectUri, code_verifier: code.verifier, resource,
        });
        t.is(stolen.status, 400, resource);
        t.is(((await stolen.json()) as { error: string }).error, 'invalid_grant', `${resource}: nothing is told about another client's code`);
        const elsewhere = await tokenRequest(server.url, {
          grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: 'http://127.0.0.1/elsewhere', code_verifier: code.verifier, resource,
        });
        t.is(elsewhere.status, 400, resource);
        t.is(((await elsewhere.json()) as { error: string }).error, 'invalid_grant', `${resource}: an exchange with another redirect URI is refused as the provider refuses it`);
      }
      const own = await tokenRequest(server.url, {
        grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: code.redirectUri, code_verifier: code.verifier, resource: server.forge,
      });
      t.is(own.status, 200);
    } finally {
      await server.close();
    }
  });
}
