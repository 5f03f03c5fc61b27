/**
 * the sign-in and consent forms' CSRF token is bound to its interaction. The existing
 * test refuses a wrong or missing token, a cross-site form and a foreign Origin; none noticed a
 * token that any interaction accepted (a token read from an attacker's own consent page).
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { follow, parseForm, postForm, registerClient, startAuthorization } from '../../helpers/oauth.js';
import { PASSWORD, rowCounts, startAuthServer, type AuthServer } from '../../auth/support.js';

const scopes = ['forge.chat.read', 'forge.chat.write'];

async function toConsent(server: AuthServer, email: string) {
  const { client_id: clientId } = await registerClient(server.url, { client_name: 'Some client', redirect_uris: ['http://127.0.0.1/callback'] });
  const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes });
  const login = parseForm((await follow(server.url, auth.jar, auth.response)).html!);
  const page = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', email], ['password', PASSWORD]]));
  return { auth, form: parseForm(page.html!), login };
}

for (const kind of databasesUnderTest()) {
  test(`the consent form's CSRF token works only for its own interaction [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const attacker = await toConsent(server, 'bob@globex.example');
      const victim = await toConsent(server, 'alice@acme.example');
      t.not(attacker.form.csrf, victim.form.csrf, 'two interactions get two tokens');
      t.not(attacker.login.csrf, victim.login.csrf);
      const acme = victim.form.organizations[0].id;
      const before = await rowCounts(server);
      // The victim's browser (its interaction cookie) submits a form carrying the attacker's token.
      const forged = await postForm(server.url, victim.auth.jar, victim.form.action,
        [['csrf', attacker.form.csrf], ['tenant', acme], ['scope', 'forge.chat.read'], ['decision', 'allow']]);
      t.is(forged.status, 403);
      t.regex(await forged.text(), /csrf_failed/);
      t.deepEqual(await rowCounts(server), before, 'nothing written');
      const own = await postForm(server.url, victim.auth.jar, victim.form.action,
        [['csrf', victim.form.csrf], ['tenant', acme], ['scope', 'forge.chat.read'], ['decision', 'allow']]);
      t.is(own.status, 303, 'the victim’s own token works');
    } finally {
      await server.close();
    }
  });
}
