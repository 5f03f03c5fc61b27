/**
 * Every page the authorization server sends carries the page headers (CSP with frame-ancestors
 * 'none', X-Frame-Options, no-store, no-referrer), oidc-provider's own auto-submitting pages
 * included: the one shown when a person signed in at the authorization server signs in as
 * someone else (prompt=login), whose inline script is allowed by its hash.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, CookieJar, follow, parseForm, postForm, startAuthorization } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

const scopes = ['forge.chat.read'];

for (const kind of databasesUnderTest()) {
  test(`the page shown when a signed-in person signs in as another account carries the page headers [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const jar = new CookieJar();
      const first = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, jar });
      const auth = await startAuthorization(server.url, { clientId: first.clientId, resource: server.forge, scopes, jar, extra: { prompt: 'login' } });
      const page = await follow(server.url, jar, auth.response);
      t.regex(page.html ?? '', /name="password"/, 'prompt=login asks for a password');
      const form = parseForm(page.html!);
      const signedIn = await postForm(server.url, jar, form.action, [['csrf', form.csrf], ['email', 'bob@globex.example'], ['password', PASSWORD]]);
      const resumed = await jar.fetch(new URL(signedIn.headers.get('location')!, server.url).href);
      const html = await resumed.text();
      t.is(resumed.status, 200);
      t.regex(html, /<form/, 'the interstitial page');
      t.regex(resumed.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, 'CSP frame-ancestors');
      t.is(resumed.headers.get('x-frame-options'), 'DENY');
      t.is(resumed.headers.get('referrer-policy'), 'no-referrer');
    } finally {
      await server.close();
    }
  });
}
