/**
 * A client ID metadata document's client authenticates at the token endpoint with PKCE alone
 * (`token_endpoint_auth_method: none`). MCP authorization lets such a client use `private_key_jwt`,
 * which Portico does not support; the page that refuses one named `client_secret_basic` and
 * `client_secret_post` as the alternatives, which a metadata document may not use either (they
 * are refused next, "must not use shared-secret token endpoint authentication methods"). It names
 * the one method that works.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { follow, metadataDocumentFetch, startAuthorization } from '../../helpers/oauth.js';
import { startAuthServer } from '../support.js';

const CLIENT_ID = 'https://app.example.com/oauth/client.json';

for (const kind of databasesUnderTest()) {
  test(`a metadata document asking for private_key_jwt is refused naming none, the method it can use [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, {
      auth: { fetch: metadataDocumentFetch(CLIENT_ID, { client_name: 'Signed App', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example.com/jwks.json' }) },
    });
    t.teardown(() => server.close());
    const auth = await startAuthorization(server.url, { clientId: CLIENT_ID, resource: server.forge, scopes: ['forge.chat.read'] });
    const page = await follow(server.url, auth.jar, auth.response);
    const text = (page.html ?? '').replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, ' ').replace(/&#39;/g, "'").replace(/\s+/g, ' ');
    t.is(page.response.status, 400, text.slice(0, 600));
    t.regex(text, /invalid_client_metadata/);
    t.regex(text, /token_endpoint_auth_method must be 'none'/, text.slice(0, 600));
    t.notRegex(text, /client_secret_basic|client_secret_post/, 'methods a metadata document may not use are not offered');
    t.notRegex(page.html ?? '', /name="password"/);
  });
}
