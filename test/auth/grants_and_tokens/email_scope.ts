/**
 * The `email` scope, asked with `openid`, is offered on the consent page beside the resource's
 * scopes, and granted puts the person's e-mail address in the ID token; unticked, the ID token has
 * none and the consent record says it was refused. Discovery advertises the scope it grants. The
 * client is one nobody here wrote (openid-client), which validates the ID token itself.
 */
import test from 'ava';
import * as client from 'openid-client';
import { databasesUnderTest } from '../../helpers/db.js';
import { CookieJar, follow, parseForm, postForm, consent } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

const redirectUri = 'http://127.0.0.1/callback';

for (const kind of databasesUnderTest()) {
  test(`openid-client: the email scope is offered on the consent page and, consented, is in the ID token; refused, it is not [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const config = await client.dynamicClientRegistration(
        new URL(server.url),
        { client_name: 'Mail-aware editor', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
        client.None(),
        { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
      );
      t.true(config.serverMetadata().scopes_supported?.includes('email'));
      t.true(config.serverMetadata().claims_supported?.includes('email'));

      /** Authorizes `scope`, showing the consent page to `answer`; returns the page and the token answer. */
      async function authorize(scope: string, answer: (page: string) => string[]) {
        const verifier = client.randomPKCECodeVerifier();
        const state = client.randomState();
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri, scope, resource: server.forge, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state,
        });
        const jar = new CookieJar();
        const login = parseForm((await follow(server.url, jar, await jar.fetch(url.href))).html!);
        const page = (await follow(server.url, jar, await postForm(server.url, jar, login.action, [['csrf', login.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]))).html!;
        const redirected = await consent(server.url, jar, page, { tenant: 'acme', allow: answer(page) });
        t.true(redirected.url.startsWith(`${redirectUri}?code=`), redirected.url);
        const tokens = await client.authorizationCodeGrant(config, new URL(redirected.url), { pkceCodeVerifier: verifier, expectedState: state }, { resource: server.forge });
        return { page, tokens };
      }

      const granted = await authorize('openid email forge.chat.read', (page) => parseForm(page).scopes);
      t.deepEqual(parseForm(granted.page).scopes, ['forge.chat.read', 'email']);
      t.regex(granted.page, /See your e-mail address \(alice@acme\.example\)/);
      const claims = granted.tokens.claims();
      t.is(claims?.sub, server.users.alice.id);
      t.is(claims?.email, 'alice@acme.example');
      // A refresh's ID token says the same.
      t.is((await client.refreshTokenGrant(config, granted.tokens.refresh_token!)).claims()?.email, 'alice@acme.example');

      const refused = await authorize('openid email forge.chat.read', () => ['forge.chat.read']);
      t.is(refused.tokens.claims()?.sub, server.users.alice.id);
      t.false('email' in (refused.tokens.claims() ?? {}), 'an e-mail the person did not share is not in the ID token');
      const records = await server.portico.context.db('audit_log').where({ name: 'consent.grant' }).orderBy('seq').select('args_redacted');
      t.is(records.length, 2);
      const args = records.map((r: { args_redacted: string }) => JSON.parse(r.args_redacted) as { shared?: string[]; refused: string[] });
      t.deepEqual(args[0].shared, ['email']);
      t.deepEqual(args[1].refused, ['email']);

      // Without openid there is no ID token to carry it: it is not offered.
      const plain = await authorize('email forge.chat.read', (page) => parseForm(page).scopes);
      t.deepEqual(parseForm(plain.page).scopes, ['forge.chat.read']);
      t.is(plain.tokens.id_token, undefined);
      // Nor does the consent record say the person refused what they were never asked.
      const third = await server.portico.context.db('audit_log').where({ name: 'consent.grant' }).orderBy('seq', 'desc').first('args_redacted');
      t.deepEqual(JSON.parse(third.args_redacted).refused, []);
    } finally {
      await server.close();
    }
  });
}
