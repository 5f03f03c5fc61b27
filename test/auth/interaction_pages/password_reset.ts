/**
 * `user password` (the operator CLI) ends every sign-in the person had: the authorization
 * server's browser session asks for the new password on the next authorize, the old one no
 * longer works, and with --revoke-connections their connections end too.
 */
import test from 'ava';
import { runAdmin } from '../../../scripts/admin.js';
import { authenticateBearer } from '../../../db/grant_store.js';
import { isAppError } from '../../../shared/errors.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeWithPassword, CookieJar, follow, parseForm, postForm, registerClient, startAuthorization } from '../../helpers/oauth.js';
import { rememberSecret } from '../../helpers/secrets.js';
import { PASSWORD, startAuthServer, type AuthServer } from '../support.js';

const NEW_PASSWORD = 'a brand new passphrase';
rememberSecret(NEW_PASSWORD);
const scopes = ['forge.chat.read'];

/** The first page an authorization in this browser lands on: the sign-in form, or consent when already signed in. */
async function landing(server: AuthServer, jar: CookieJar, clientId: string) {
  const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes, jar });
  return { auth, page: await follow(server.url, jar, auth.response) };
}

async function signInWith(server: AuthServer, jar: CookieJar, html: string, password: string) {
  const form = parseForm(html);
  return postForm(server.url, jar, form.action, [['csrf', form.csrf], ['email', 'alice@acme.example'], ['password', password]]);
}

for (const kind of databasesUnderTest()) {
  test(`a password reset ends the browser's sign-in at the authorization server and, if asked, the connections [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const tokens = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'Editor', redirect_uris: ['http://127.0.0.1/callback'] });
      const jar = new CookieJar();
      const first = await landing(server, jar, clientId);
      t.regex(first.page.html!, /name="password"/);
      const signedIn = await follow(server.url, jar, await signInWith(server, jar, first.page.html!, PASSWORD));
      t.regex(signedIn.html!, /name="decision"/, 'signed in: the consent page');
      t.notRegex((await landing(server, jar, clientId)).page.html!, /name="password"/, 'the browser stays signed in');

      const out: string[] = [];
      const err: string[] = [];
      const code = await runAdmin(['user', 'password', '--email', 'Alice@acme.example', '--password-stdin', '--revoke-connections'],
        { out: (l) => out.push(l), err: (l) => err.push(l), stdin: async () => `${NEW_PASSWORD}\n` }, { DATABASE_URL: server.database.url });
      t.is(code, 0, err.join('\n'));
      // Two browsers signed in: the one that made the connection, and this one.
      t.regex(out.join('\n'), /^set a new password for alice@acme\.example; ended 2 sign-in session\(s\); revoked 1 connection\(s\): .* → forge$/);

      const again = await landing(server, jar, clientId);
      t.regex(again.page.html!, /name="password"/, 'the browser must sign in again');
      const wrong = await signInWith(server, jar, again.page.html!, PASSWORD);
      t.is(wrong.status, 401, 'the old password no longer works');
      const right = await follow(server.url, jar, await signInWith(server, jar, again.page.html!, NEW_PASSWORD));
      t.regex(right.html!, /name="decision"/, 'the new one does');

      const refused = await authenticateBearer(server.portico.context.db, tokens.accessToken, server.forge).catch((error: unknown) => error);
      t.true(isAppError(refused) && refused.code === 'connection_revoked', 'the connection was revoked');
      const record = await server.portico.context.db('audit_log').where({ name: 'user.password' }).first();
      t.like(JSON.parse(record.args_redacted), { email: 'alice@acme.example', revoked_connections: 1 });
    } finally {
      await server.close();
    }
  });
}
