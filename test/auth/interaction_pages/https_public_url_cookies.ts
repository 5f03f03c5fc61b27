/**
 * The authorization server behind a TLS-terminating proxy: `PUBLIC_AUTH_URL` is https, the proxy
 * talks plain http to Portico and `TRUST_PROXY` is left at 0. The sign-in's cookies (the
 * interaction, and the browser session that lasts 12 hours) must be `Secure`, as the console's are
 * with an https `PUBLIC_API_URL` (test/console/api_edges/https_public_url.ts): the public URL decides,
 * not the hop from the proxy. Before, oidc-provider set them without `Secure` (it looks at the
 * request's own scheme), so a browser would send the sign-in session over plain http.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { CookieJar, follow, parseForm, postForm, registerClient, startAuthorization } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

const PUBLIC_ORIGIN = 'https://auth.portico.test';

/** A jar that also keeps every Set-Cookie header it was sent. */
class RecordingJar extends CookieJar {
  readonly setCookies: string[] = [];
  override store(response: Response): void {
    this.setCookies.push(...response.headers.getSetCookie());
    super.store(response);
  }
}

for (const kind of databasesUnderTest()) {
  test(`with an https PUBLIC_AUTH_URL and TRUST_PROXY=0 the sign-in's cookies are Secure, and sign-in works over the proxy's plain http [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { env: { PUBLIC_AUTH_URL: PUBLIC_ORIGIN } });
    t.teardown(() => server.close());
    const client = await registerClient(server.url);
    const jar = new RecordingJar();
    const auth = await startAuthorization(server.url, { clientId: client.client_id, resource: `${PUBLIC_ORIGIN}/mcp/forge`, scopes: ['forge.chat.read'], jar });
    t.is(auth.response.status, 303);
    const signInPage = await follow(server.url, jar, auth.response);
    t.truthy(signInPage.html, `${signInPage.response.status} ${signInPage.url}`);
    const form = parseForm(signInPage.html!);
    // The browser's form comes from the public origin, through the proxy.
    const signedIn = await postForm(server.url, jar, form.action, [['csrf', form.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]], { origin: PUBLIC_ORIGIN });
    const consentPage = await follow(server.url, jar, signedIn);
    t.regex(consentPage.html ?? '', /name="decision"/, `${consentPage.response.status} ${consentPage.url}`);

    const names = jar.setCookies.map((cookie) => cookie.split('=')[0]);
    t.true(names.includes('_interaction'), names.join(', '));
    t.true(names.includes('_session'), names.join(', '));
    for (const cookie of jar.setCookies) t.regex(cookie, /;\s*secure/i, cookie);
  });
}
