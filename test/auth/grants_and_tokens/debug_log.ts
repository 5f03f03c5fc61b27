/**
 * LOG_LEVEL=debug says why oidc-provider refused a request: the route, the error a client got,
 * and the provider's own detail (which the answer leaves out), with the request's id and the
 * client's. An operator asked why a client cannot connect reads it there. No code, verifier or
 * token reaches the line, and at the usual level (info) nothing is added.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, pkce, startAuthorization, tokenRequest } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer, type AuthServer } from '../support.js';

const scopes = ['forge.chat.read'];

interface Refusal { level: string; request_id?: string; route?: string; error?: string; description?: string; detail?: string; client_id?: string }

function refusals(server: AuthServer): Refusal[] {
  return server.logs.map((line) => JSON.parse(line) as Refusal & { msg: string }).filter((line) => line.msg === 'oauth refused');
}

/** A code exchanged with a verifier that is not its own, and an authorization to a redirect URI the client never registered. */
async function refuseTwice(server: AuthServer) {
  const { code, clientId, redirectUri } = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
  const verifier = pkce().verifier;
  const exchange = await tokenRequest(server.url, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, resource: server.forge });
  const elsewhere = await startAuthorization(server.url, { clientId, redirectUri: 'http://127.0.0.1/elsewhere', resource: server.forge, scopes });
  return { code, clientId, verifier, exchange, elsewhere: elsewhere.response };
}

for (const kind of databasesUnderTest()) {
  test(`at LOG_LEVEL=debug a refused token exchange and authorization are logged with the provider's detail [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { env: { LOG_LEVEL: 'debug' } });
    try {
      const { code, clientId, verifier, exchange, elsewhere } = await refuseTwice(server);
      t.is(exchange.status, 400);
      t.is(((await exchange.json()) as { error: string }).error, 'invalid_grant');
      t.is(elsewhere.status, 400);

      const logged = refusals(server);
      const token = logged.find((line) => line.route === 'token');
      t.like(token, { level: 'debug', error: 'invalid_grant', client_id: clientId, request_id: exchange.headers.get('x-request-id')! });
      t.regex(token?.detail ?? '', /code_verifier|PKCE/i, JSON.stringify(token));
      const authorization = logged.find((line) => line.route === 'authorization');
      t.like(authorization, { level: 'debug', error: 'invalid_redirect_uri', client_id: clientId, request_id: elsewhere.headers.get('x-request-id')! });
      t.truthy(authorization?.description, JSON.stringify(authorization));

      const text = JSON.stringify(logged);
      t.false(text.includes(code), 'no authorization code');
      t.false(text.includes(verifier), 'no code verifier');
    } finally {
      await server.close();
    }
  });

  test(`at LOG_LEVEL=info a refusal adds no line [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { exchange, elsewhere } = await refuseTwice(server);
      t.deepEqual([exchange.status, elsewhere.status], [400, 400]);
      t.deepEqual(refusals(server), []);
      t.true(server.logs.some((line) => line.includes('"msg":"request"')), 'the server logs at info');
    } finally {
      await server.close();
    }
  });
}
