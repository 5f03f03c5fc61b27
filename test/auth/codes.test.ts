/**
 * PKCE and authorization codes (checklist B1-B3, C1-C2): PKCE is required and S256 only, a wrong
 * or missing verifier is refused and kills the code, a replayed code revokes everything the grant
 * issued, and 20 parallel redemptions of one code yield exactly one token.
 */
import test from 'ava';
import { authenticateBearer, findConnectionByGrant } from '../../db/grant_store.js';
import { isAppError } from '../../shared/errors.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeCode, CookieJar, errorReturnOf, follow, pkce, registerClient, startAuthorization, tokenRequest } from '../helpers/oauth.js';
import { PASSWORD, rowCounts, startAuthServer, type AuthServer } from './support.js';

const scopes = ['forge.chat.read'];

function codeFor(server: AuthServer) {
  return authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
}

function redeem(server: AuthServer, code: { code: string; clientId: string; redirectUri: string; verifier: string }, verifier = code.verifier) {
  return tokenRequest(server.url, { grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: code.redirectUri, code_verifier: verifier, resource: server.forge });
}

async function errorOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: string }).error;
}

for (const kind of databasesUnderTest()) {
  test(`an authorization request without PKCE, with plain, or with an empty challenge is refused [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { client_id: clientId } = await registerClient(server.url);
      const base = { clientId, resource: server.forge, scopes };

      // A self-registered client: each error is a page with a way back, not a redirect (checklist A5(b)).
      const missing = await startAuthorization(server.url, { ...base, pkce: null });
      const missingRedirect = await errorReturnOf(missing.response);
      t.is(missingRedirect.searchParams.get('error'), 'invalid_request');
      t.regex(missingRedirect.searchParams.get('error_description')!, /PKCE/);
      t.is(missingRedirect.searchParams.get('iss'), server.url, 'errors carry iss too (RFC 9207)');

      const pair = pkce();
      const plain = await startAuthorization(server.url, { ...base, pkce: null, extra: { code_challenge: pair.verifier, code_challenge_method: 'plain' } });
      t.is((await errorReturnOf(plain.response)).searchParams.get('error'), 'invalid_request');

      const noMethod = await startAuthorization(server.url, { ...base, pkce: null, extra: { code_challenge: pair.challenge } });
      t.is((await errorReturnOf(noMethod.response)).searchParams.get('error'), 'invalid_request', 'a missing method is not silently plain');

      const empty = await startAuthorization(server.url, { ...base, pkce: null, extra: { code_challenge: '', code_challenge_method: 'S256' } });
      t.is((await errorReturnOf(empty.response)).searchParams.get('error'), 'invalid_request');

      // None of them reached the sign-in page.
      for (const attempt of [missing, plain, noMethod, empty]) t.false(attempt.pageUrl.includes('/oauth/interaction/'));
    } finally {
      await server.close();
    }
  });

  test(`a wrong or missing code_verifier is refused and the code is dead afterwards [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const wrong = await codeFor(server);
      const refused = await redeem(server, wrong, pkce().verifier);
      t.is(refused.status, 400);
      t.is(await errorOf(refused), 'invalid_grant');
      const retried = await redeem(server, wrong);
      t.is(retried.status, 400, 'the right verifier no longer works: the code was exposed');
      t.is(await errorOf(retried), 'invalid_grant');

      const missing = await codeFor(server);
      const noVerifier = await tokenRequest(server.url, { grant_type: 'authorization_code', code: missing.code, client_id: missing.clientId, redirect_uri: missing.redirectUri });
      t.is(noVerifier.status, 400);
      t.is(await errorOf(noVerifier), 'invalid_grant');
      t.is((await redeem(server, missing)).status, 400);

      t.is((await rowCounts(server)).accessTokens, 0, 'no access token was ever issued');
      const revoked = await server.portico.context.db('audit_log').where({ name: 'grant.revoke' }).select('args_redacted');
      t.deepEqual(revoked.map((r) => JSON.parse(r.args_redacted).reason), ['pkce_verification_failed', 'pkce_verification_failed']);
    } finally {
      await server.close();
    }
  });

  test(`a replayed code fails and revokes the tokens it issued, and the connection [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const code = await codeFor(server);
      const first = await redeem(server, code);
      t.is(first.status, 200);
      const tokens = (await first.json()) as { access_token: string; refresh_token: string };
      const principal = await authenticateBearer(db, tokens.access_token, server.forge);

      const replay = await redeem(server, code);
      t.is(replay.status, 400);
      t.is(await errorOf(replay), 'invalid_grant');

      const error = await authenticateBearer(db, tokens.access_token, server.forge).catch((e: unknown) => e);
      t.true(isAppError(error) && error.code === 'connection_revoked', 'the access token from the first redemption is dead');
      const refresh = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: code.clientId });
      t.is(refresh.status, 400);
      t.is(await errorOf(refresh), 'invalid_grant');
      const connection = await findConnectionByGrant(db, principal.grantId);
      t.truthy(connection?.revoked_at);
      const audit = await db('audit_log').where({ name: 'grant.revoke', connection_id: principal.connectionId }).first();
      t.is(JSON.parse(audit.args_redacted).reason, 'authorization_code_replay');
      t.like(server.published.find((e) => e.type === 'connection.revoked'), { connectionId: principal.connectionId, grantId: principal.grantId });
    } finally {
      await server.close();
    }
  });

  test(`20 parallel redemptions of one code give exactly one token [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const code = await codeFor(server);
      const responses = await Promise.all(Array.from({ length: 20 }, () => redeem(server, code)));
      const statuses = responses.map((r) => r.status);
      t.is(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(',')}`);
      t.is(statuses.filter((s) => s === 400).length, 19);
      for (const response of responses.filter((r) => r.status === 400)) t.is(await errorOf(response), 'invalid_grant');
      const rows = await server.portico.context.db('oidc_payloads').where({ model: 'AccessToken' }).whereNull('revoked_at');
      t.true(rows.length <= 1, 'never two live access tokens');
    } finally {
      await server.close();
    }
  });

  test(`a code is bound to its client and redirect URI [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const code = await codeFor(server);
      const other = await registerClient(server.url);
      const wrongClient = await tokenRequest(server.url, { grant_type: 'authorization_code', code: code.code, client_id: other.client_id, redirect_uri: code.redirectUri, code_verifier: code.verifier });
      t.is(await errorOf(wrongClient), 'invalid_grant');
      const wrongRedirect = await tokenRequest(server.url, { grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: 'http://127.0.0.1/other', code_verifier: code.verifier });
      t.is(await errorOf(wrongRedirect), 'invalid_grant');
      t.is((await rowCounts(server)).accessTokens, 0);
    } finally {
      await server.close();
    }
  });
}

test('the sign-in page is reached only through the authorization endpoint', async (t) => {
  const server = await startAuthServer('sqlite');
  try {
    const jar = new CookieJar();
    const page = await follow(server.url, jar, await jar.fetch(`${server.url}/oauth/interaction/not-a-real-uid`));
    t.is(page.response.status, 404);
    t.regex(page.html!, /finished or has expired/);
  } finally {
    await server.close();
  }
});
