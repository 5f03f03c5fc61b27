/**
 * The consent page says whom the person is signed in as; the sign-in at the authorization server
 * lasts 12 hours and there is no sign-out. A person who sees the wrong account there (a shared
 * computer, a second account, the demo's several people) must be able to sign in as someone else
 * from the page itself, without waiting for the application to send prompt=login, and the
 * connection then belongs to the account they signed in with, with the application's state intact.
 */
import test from 'ava';
import { authenticateBearer } from '../../../db/grant_store.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { consent, CookieJar, exchangeCode, follow, parseForm, postForm, registerClient, startAuthorization, unescapeHtml } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`the consent page lets a person signed in as the wrong account sign in as another one [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const client = await registerClient(server.url);
      const jar = new CookieJar();
      const auth = await startAuthorization(server.url, { clientId: client.client_id, resource: server.forge, scopes: ['forge.chat.read'], jar });
      let page = await follow(server.url, jar, auth.response);
      const login = parseForm(page.html!);
      page = await follow(server.url, jar, await postForm(server.url, jar, login.action, [['csrf', login.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
      t.regex(page.html ?? '', /Signed in as <strong>alice@acme.example<\/strong>/);

      // Not the account the person meant: the page offers another one.
      const other = /<a [^>]*href="([^"]+)"[^>]*>[^<]*(another account|someone else)[^<]*<\/a>/i.exec(page.html ?? '');
      t.truthy(other, 'the consent page has a way to sign in as someone else');
      if (!other) return;
      page = await follow(server.url, jar, await jar.fetch(new URL(unescapeHtml(other[1]), server.url).href));
      t.regex(page.html ?? '', /name="password"/, 'it leads to the sign-in page');
      const again = parseForm(page.html!);
      let next = await postForm(server.url, jar, again.action, [['csrf', again.csrf], ['email', 'bob@globex.example'], ['password', PASSWORD]]);
      page = await follow(server.url, jar, next);
      // oidc-provider ends the first person's session with an auto-submitting form before it goes on.
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html ?? '')?.[1];
      if (xsrf) {
        const action = /<form method="post" action="([^"]+)"/.exec(page.html!)![1];
        next = await postForm(server.url, jar, action, [['xsrf', xsrf], ['logout', 'yes']]);
        page = await follow(server.url, jar, next);
      }
      t.regex(page.html ?? '', /Signed in as <strong>bob@globex.example<\/strong>/);

      const done = await consent(server.url, jar, page.html!, { tenant: 'globex' });
      const redirect = new URL(done.url);
      t.is(redirect.searchParams.get('state'), auth.state, 'the application\'s state came back');
      const tokens = await exchangeCode(server.url, { code: redirect.searchParams.get('code')!, clientId: client.client_id, redirectUri: auth.redirectUri, verifier: auth.verifier });
      const principal = await authenticateBearer(server.portico.context.db, tokens.accessToken, server.forge);
      t.is(principal.user.id, server.users.bob.id);
      t.is(principal.tenant.id, server.tenants.globex.id);
    } finally {
      await server.close();
    }
  });

  test(`the page that says an account cannot connect a product offers another account too [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      // multi@ is a member, not an administrator, and aegis is connected by administrators only.
      const client = await registerClient(server.url);
      const auth = await startAuthorization(server.url, { clientId: client.client_id, resource: server.aegis, scopes: ['aegis.scans.read'] });
      let page = await follow(server.url, auth.jar, auth.response);
      const login = parseForm(page.html!);
      page = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', 'multi@example.com'], ['password', PASSWORD]]));
      t.is(page.response.status, 403);
      const other = /<a [^>]*href="([^"]+)"[^>]*>[^<]*another account[^<]*<\/a>/i.exec(page.html ?? '');
      t.truthy(other, 'the page has a way to sign in as someone else');
      if (!other) return;
      page = await follow(server.url, auth.jar, await auth.jar.fetch(new URL(unescapeHtml(other[1]), server.url).href));
      t.regex(page.html ?? '', /name="password"/, 'it leads to the sign-in page');
    } finally {
      await server.close();
    }
  });
}
