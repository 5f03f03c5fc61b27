/**
 * A client pre-registered by an operator may reuse the live grant its browser session already
 * holds "for the same resource and scopes" (docs/auth.md). A scope the person unticked before is
 * not held: when the client asks for it again (a step-up after 403 insufficient_scope, docs/clients.md:
 * "the person sees the consent page again"), the person is asked, instead of the client being
 * answered access_denied, or silently given less than it asked for, by a decision the person made
 * about another request.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { consent, CookieJar, exchangeCode, follow, parseForm, postForm, startAuthorization } from '../../helpers/oauth.js';
import { addRegisteredClient, PASSWORD, startAuthServer, type AuthServer } from '../support.js';

const REDIRECT = 'https://assistant.acme.example/oauth/callback';
const CLIENT = 'reg_web_assistant';

async function ask(server: AuthServer, jar: CookieJar, scopes: string[]) {
  const auth = await startAuthorization(server.url, { clientId: CLIENT, redirectUri: REDIRECT, resource: server.forge, scopes, jar });
  return { auth, page: await follow(server.url, jar, auth.response) };
}

for (const kind of databasesUnderTest()) {
  test(`an operator's client asking again for a scope the person unticked gets the consent page, not a remembered refusal [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      await addRegisteredClient(server, { clientId: CLIENT, name: 'Web assistant', redirectUri: REDIRECT });
      const jar = new CookieJar();

      // First connection: the person signs in and unticks the write scope.
      let { page } = await ask(server, jar, ['forge.chat.read', 'forge.chat.write']);
      const login = parseForm(page.html!);
      page = await follow(server.url, jar, await postForm(server.url, jar, login.action, [['csrf', login.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
      page = await consent(server.url, jar, page.html!, { tenant: 'acme', allow: ['forge.chat.read'] });
      t.truthy(new URL(page.url).searchParams.get('code'), 'the first connection got its code');

      // The same scope again: the live grant is reused without a page (what an operator's client may do).
      const again = await ask(server, jar, ['forge.chat.read']);
      t.truthy(URL.parse(again.page.url)?.searchParams.get('code'), 'the same scope is answered from the live grant');

      // Step-up: the client now needs the write scope the person unticked.
      const stepUp = await ask(server, jar, ['forge.chat.write']);
      t.is(URL.parse(stepUp.page.url)?.searchParams.get('error') ?? null, null, `the client was answered ${stepUp.page.url}`);
      t.regex(stepUp.page.html ?? '', /name="decision"/, 'the person is asked');
      t.deepEqual(stepUp.page.html ? parseForm(stepUp.page.html).scopes : [], ['forge.chat.write']);

      // Allowed this time: the client gets the write scope it asked for.
      if (!stepUp.page.html) return;
      const allowed = await consent(server.url, jar, stepUp.page.html, { tenant: 'acme' });
      const code = new URL(allowed.url).searchParams.get('code')!;
      const tokens = await exchangeCode(server.url, { code, clientId: CLIENT, redirectUri: REDIRECT, verifier: stepUp.auth.verifier, resource: server.forge });
      t.is(tokens.scope, 'forge.chat.write');

      // Both scopes at once, after a refusal of one of them: asked again, not silently cut to one.
      const jar2 = new CookieJar();
      ({ page } = await ask(server, jar2, ['forge.chat.read', 'forge.chat.write']));
      const login2 = parseForm(page.html!);
      page = await follow(server.url, jar2, await postForm(server.url, jar2, login2.action, [['csrf', login2.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
      await consent(server.url, jar2, page.html!, { tenant: 'acme', allow: ['forge.chat.read'] });
      const both = await ask(server, jar2, ['forge.chat.read', 'forge.chat.write']);
      t.regex(both.page.html ?? '', /name="decision"/, `asking for both again shows the consent page (got ${both.page.url})`);
      // No scope at all asks for every scope of the resource (docs/auth.md): the unticked one too.
      const all = await ask(server, jar2, []);
      t.regex(all.page.html ?? '', /name="decision"/, `asking for the whole resource again shows the consent page (got ${all.page.url})`);
    } finally {
      await server.close();
    }
  });
}
