/**
 * `login_hint` (OpenID Connect Core §3.1.2.1: a hint about the login identifier the person might
 * use) fills in the sign-in page's Email field, as a person expects when their application already
 * knows who they are. It is only a hint: the person may change it, the password still decides, and
 * it is shown escaped.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { follow, parseForm, postForm, registerClient, startAuthorization, unescapeHtml } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`the sign-in page fills in the Email field from login_hint, escaped, and the password still decides [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const client = await registerClient(server.url);
      const auth = await startAuthorization(server.url, { clientId: client.client_id, resource: server.forge, scopes: ['forge.chat.read'], extra: { login_hint: 'alice@acme.example' } });
      const page = await follow(server.url, auth.jar, auth.response);
      const email = /<input id="email"[^>]*value="([^"]*)"/.exec(page.html ?? '')?.[1];
      t.is(unescapeHtml(email ?? ''), 'alice@acme.example', 'the Email field holds the hint');

      const hostile = await startAuthorization(server.url, { clientId: client.client_id, resource: server.forge, scopes: ['forge.chat.read'], extra: { login_hint: '"><script>alert(1)</script>' } });
      const hostilePage = await follow(server.url, hostile.jar, hostile.response);
      t.false((hostilePage.html ?? '').includes('<script>alert(1)</script>'), 'the hint is escaped');

      // The person signs in as someone else than the hint: the password decides.
      const form = parseForm(page.html!);
      const signedIn = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf], ['email', 'multi@example.com'], ['password', PASSWORD]]));
      t.regex(signedIn.html ?? '', /Signed in as <strong>multi@example.com<\/strong>/);
    } finally {
      await server.close();
    }
  });
}
