/**
 * RFC 8414 §2: `revocation_endpoint_auth_methods_supported` and
 * `introspection_endpoint_auth_methods_supported`, when omitted, default to
 * `client_secret_basic`. Every self-registered client is public (`none`), and the revocation and
 * introspection endpoints accept `none` from it; the metadata has to say so, or a client that
 * reads it concludes it cannot revoke its own tokens.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { registerClient } from '../../helpers/oauth.js';
import { startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`the metadata names the client authentication the revocation and introspection endpoints accept [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const client = await registerClient(server.url);
      t.is(client.token_endpoint_auth_method, 'none');
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const metadata = (await (await fetch(`${server.url}${path}`)).json()) as Record<string, unknown>;
        const token = metadata.token_endpoint_auth_methods_supported as string[];
        t.true(token.includes('none'), path);
        for (const endpoint of ['revocation', 'introspection']) {
          t.truthy(metadata[`${endpoint}_endpoint`], `${path}: ${endpoint} endpoint`);
          // Omitted means client_secret_basic only (RFC 8414 §2), which no self-registered client has.
          t.deepEqual(metadata[`${endpoint}_endpoint_auth_methods_supported`], token, `${path}: ${endpoint}_endpoint_auth_methods_supported`);
        }
      }

      // And `none` is what those endpoints take from a public client: its client_id alone.
      for (const endpoint of ['revoke', 'introspect']) {
        const response = await fetch(`${server.url}/oauth/${endpoint}`, {
          method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: 'not-a-token-of-anyone', client_id: client.client_id }),
        });
        t.is(response.status, 200, endpoint);
      }
    } finally {
      await server.close();
    }
  });
}
