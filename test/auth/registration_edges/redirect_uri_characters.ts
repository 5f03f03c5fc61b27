/**
 * Registration refuses redirect URIs holding spaces or backslashes (docs/auth.md, "Redirect URIs";
 * auth/clients.ts classifyRedirectUri). oidc-provider's own checks accept both: a backslash reads as
 * a slash to WHATWG URL parsing (`https://c.example\@evil.example/cb` is c.example's path there) and
 * as part of the user information to other parsers (evil.example is the host), so a client's
 * redirect target would depend on who reads it.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { rowCounts, startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`redirect URIs with a backslash or a space are refused at registration, and nothing is written [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const before = await rowCounts(server);
      for (const uri of ['https://c.example\\@evil.example/cb', 'https://c.example/c\\b', 'https://c.example/c b', 'cursor://anysphere.cursor-retrieval/oauth/call back', 'http://127.0.0.1/call\\back']) {
        const response = await fetch(`${server.url}/oauth/register`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [uri], token_endpoint_auth_method: 'none' }),
        });
        t.is(response.status, 400, JSON.stringify(uri));
        const body = (await response.json()) as { error: string; error_description?: string };
        t.is(body.error, 'invalid_redirect_uri', JSON.stringify(uri));
        t.regex(body.error_description ?? '', /spaces, control characters or backslashes/, JSON.stringify(uri));
      }
      t.deepEqual(await rowCounts(server), before, 'refused registrations write nothing');
    } finally {
      await server.close();
    }
  });
}
