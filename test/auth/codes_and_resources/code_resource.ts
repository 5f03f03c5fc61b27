/**
 * A code exchange that names a resource the grant does not hold (or several) is refused with
 * invalid_target before oidc-provider consumes the code (guardCodeResource, auth/provider.ts), so
 * the client's corrected retry gets its tokens instead of being taken for code replay, which would
 * revoke the connection. Refreshes have the same guard (rotateRefreshToken).
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, tokenRequest } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

type Server = Awaited<ReturnType<typeof startAuthServer>>;

async function refusedThenRetried(t: import('ava').ExecutionContext, server: Server, wrongResource: string | string[]) {
  const { db } = server.portico.context;
  const code = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'] });
  const base = { grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: code.redirectUri, code_verifier: code.verifier };

  const wrong = await tokenRequest(server.url, { ...base, resource: wrongResource });
  t.is(wrong.status, 400);
  t.is(((await wrong.json()) as { error: string }).error, 'invalid_target');

  const right = await tokenRequest(server.url, { ...base, resource: server.forge });
  const body = (await right.json()) as { error?: string; error_description?: string; access_token?: string };
  t.is(right.status, 200, `the corrected exchange works: ${JSON.stringify(body)}`);

  const connection = await db('connections').where({ product: 'forge' }).orderBy('created_at', 'desc').first();
  t.is(connection.revoked_at, null, 'the connection was not revoked as if the code had been replayed');
  t.deepEqual((await db('audit_log').where({ name: 'grant.revoke' })).map((r: { args_redacted: string }) => r.args_redacted), [], 'no grant.revoke (authorization_code_replay) record');
}

for (const kind of databasesUnderTest()) {
  test(`a code exchange naming another product's resource is refused and spends nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      await refusedThenRetried(t, server, server.aegis);
    } finally {
      await server.close();
    }
  });

  test(`a code exchange naming several resources is refused and spends nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      await refusedThenRetried(t, server, [server.forge, server.aegis]);
    } finally {
      await server.close();
    }
  });
}
