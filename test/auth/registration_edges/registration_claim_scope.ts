/**
 * The scopes a self-registered client may name in its registration are those the authorization
 * server supports: oidc-provider's list, which holds the scopes of its claims (`email`) besides
 * `openid`, `offline_access` and the catalog's. A registration naming `email` was accepted before
 * the server began dropping the registered scope, and must still be.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`a self-registered client naming the email scope is registered, an unknown scope still refused [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const register = (scope: string) => fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Editor', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', scope }),
      });
      const accepted = await register('openid email forge.chat.read');
      t.is(accepted.status, 201, JSON.stringify(await accepted.clone().json()));
      const refused = await register('openid admin.everything.write');
      t.is(refused.status, 400);
      t.is(((await refused.json()) as { error: string }).error, 'invalid_client_metadata');
    } finally {
      await server.close();
    }
  });
}
