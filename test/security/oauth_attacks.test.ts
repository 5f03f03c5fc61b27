/**
 * Attacks on the authorization server that test/auth does not already make (the mapping is in
 * docs/security.md): more redirect-URI spellings, an already-signed-in victim (CVE-2025-4143),
 * script schemes under case folding and control characters and network or system-handler schemes
 * (property tests), PKCE verifier
 * grammar and a plain-method downgrade, an expired code, metadata-document SSRF to every
 * private range, credential POSTs never answered with 307, a spoofed X-Forwarded-Host, and
 * cookie attributes.
 */
import { createHash } from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeCode, CookieJar, follow, metadataDocumentFetch, parseForm, postForm, registerClient, startAuthorization, tokenRequest } from '../helpers/oauth.js';
import { addRegisteredClient, PASSWORD, rowCounts, startAuthServer, type AuthServer } from '../auth/support.js';

const scopes = ['forge.chat.read'];

async function errorOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: string }).error;
}

function register(url: string, redirectUri: string) {
  return fetch(`${url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }) });
}

function alice(server: AuthServer, extra: Partial<Parameters<typeof authorizeCode>[1]> = {}) {
  return authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, ...extra });
}

for (const kind of databasesUnderTest()) {
  test(`more redirect URI spellings, even for a signed-in person who consented before, get no redirect [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const client = await registerClient(server.url, { redirect_uris: ['https://c.example/cb'] });
      // The victim is signed in and has consented to this client before (CVE-2025-4143's setting).
      const jar = new CookieJar();
      await alice(server, { clientId: client.client_id, redirectUri: 'https://c.example/cb', jar });
      const spellings = [
        'HTTPS://C.EXAMPLE/cb', 'https://C.example/cb', 'https://c.example./cb', 'https://c.example/cb%2F', 'https://c.example/c%62', 'https://c.example/cb%00',
        'https://c.example/cb%252F', 'https://c.example/cb?', 'https://c.example/cb#', 'https://c.example/cb;x', 'https://c.example/cb\t', 'https://c.example\\@evil.example/cb',
        'https://c.example%40evil.example/cb', 'https://evil.example#@c.example/cb', 'https://evil.example?@c.example/cb', '//evil.example/cb', '/cb', 'https:c.example/cb',
        'https://c.example:443/cb', 'https://xn--c-example-0ua.example/cb', 'https://c.example/cb/.', 'https://c.example/./cb',
      ];
      for (const redirectUri of spellings) {
        const attempt = await startAuthorization(server.url, { clientId: client.client_id, redirectUri, resource: server.forge, scopes, jar });
        t.is(attempt.response.status, 400, redirectUri);
        t.is(attempt.response.headers.get('location'), null, `no redirect for ${JSON.stringify(redirectUri)}`);
        t.regex(attempt.response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
      }
      // The registered URI itself still works for that person.
      const ok = await startAuthorization(server.url, { clientId: client.client_id, redirectUri: 'https://c.example/cb', resource: server.forge, scopes, jar });
      t.is(ok.response.status, 303);
    } finally {
      await server.close();
    }
  });

  test(`a code verifier must follow RFC 7636 grammar, and the challenge itself is not a verifier (plain downgrade) [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const short = { verifier: 'a', challenge: createHash('sha256').update('a').digest('base64url') };
      const { client_id: clientId } = await registerClient(server.url);
      const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes, pkce: short });
      const page = await follow(server.url, auth.jar, auth.response);
      const login = parseForm(page.html!);
      const consentPage = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
      const form = parseForm(consentPage.html!);
      const done = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf], ['tenant', form.organizations[0].id], ['scope', scopes[0]], ['decision', 'allow']]));
      const code = new URL(done.url).searchParams.get('code')!;
      const refused = await tokenRequest(server.url, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: auth.redirectUri, code_verifier: 'a' });
      t.is(refused.status, 400);
      t.true(['invalid_request', 'invalid_grant'].includes(await errorOf(refused)), 'a one-character verifier is refused even though its hash matches');

      const normal = await alice(server);
      const challenge = createHash('sha256').update(normal.verifier).digest('base64url');
      const downgrade = await tokenRequest(server.url, { grant_type: 'authorization_code', code: normal.code, client_id: normal.clientId, redirect_uri: normal.redirectUri, code_verifier: challenge });
      t.is(await errorOf(downgrade), 'invalid_grant', 'sending the challenge as a plain verifier fails');
      t.is((await rowCounts(server)).accessTokens, 0);
    } finally {
      await server.close();
    }
  });

  test(`an authorization code past its lifetime is refused [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const code = await alice(server);
      const { db } = server.portico.context;
      // Age the stored code past its 60 s lifetime instead of waiting for it.
      const row = await db('oidc_payloads').where({ model: 'AuthorizationCode' }).first();
      const payload = JSON.parse(row.payload);
      payload.exp = Math.floor(Date.now() / 1000) - 1;
      await db('oidc_payloads').where({ model: 'AuthorizationCode', id: row.id }).update({ payload: JSON.stringify(payload), expires_at: Date.now() - 1000 });
      const late = await tokenRequest(server.url, { grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: code.redirectUri, code_verifier: code.verifier, resource: server.forge });
      t.is(late.status, 400);
      t.is(await errorOf(late), 'invalid_grant');
      t.is((await rowCounts(server)).accessTokens, 0);
    } finally {
      await server.close();
    }
  });

  test(`sign-in and consent POSTs are answered with 303, never 307 [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { client_id: clientId } = await registerClient(server.url);
      const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes });
      const page = await follow(server.url, auth.jar, auth.response);
      const login = parseForm(page.html!);
      const signedIn = await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]);
      t.is(signedIn.status, 303);
      const consentPage = await follow(server.url, auth.jar, signedIn);
      const form = parseForm(consentPage.html!);
      const consented = await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf], ['tenant', form.organizations[0].id], ['scope', scopes[0]], ['decision', 'allow']]);
      t.is(consented.status, 303);
      for (const cookie of consented.headers.getSetCookie().concat(signedIn.headers.getSetCookie(), auth.response.headers.getSetCookie())) {
        t.regex(cookie, /;\s*httponly/i, cookie.split('=')[0]);
        t.regex(cookie, /;\s*samesite=(lax|strict)/i, cookie.split('=')[0]);
      }
    } finally {
      await server.close();
    }
  });
}

test('script, data and file schemes are refused at registration under any case, whitespace or control characters (property)', async (t) => {
  // The registration rate limit would answer 429 after 20; this test is about the scheme check.
  const server = await startAuthServer('sqlite', { auth: { registrationsPerMinute: 100_000 } });
  try {
    const before = await rowCounts(server);
    const noise = fc.constantFrom('', ' ', '\t', '\n', '\r', '\u0000', '\u0001', '\u000b', '\u001f', '\u007f', '\u00a0', '\ufeff', '\u2028');
    const scheme = fc.constantFrom('javascript', 'data', 'vbscript', 'file', 'blob', 'about');
    // Each letter in either case, with noise anywhere: JaVa\tScRiPt:alert(1), " DATA:text/html,…"
    const hostile = fc.tuple(scheme, fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }), fc.array(noise, { minLength: 12, maxLength: 12 }), fc.constantFrom('alert(1)', '//evil.example/cb', 'text/html,<script>x</script>', '///etc/passwd'))
      .map(([name, upper, gaps, rest]) => {
        let out = gaps[0];
        [...name].forEach((c, i) => (out += (upper[i % upper.length] ? c.toUpperCase() : c) + gaps[(i + 1) % gaps.length]));
        return `${out}:${rest}`;
      });
    await fc.assert(fc.asyncProperty(hostile, async (uri) => {
      const response = await register(server.url, uri);
      const body = (await response.json()) as { error?: string };
      return response.status === 400 && (body.error === 'invalid_redirect_uri' || body.error === 'invalid_client_metadata');
    }), { numRuns: 300 });
    t.deepEqual(await rowCounts(server), before, 'no client was registered');
  } finally {
    await server.close();
  }
});

/** Schemes that reach the network or start a system or browser handler (auth/clients.ts), a sample of each family. */
const HANDLER_SCHEMES = [
  'ftp', 'ftps', 'sftp', 'ssh', 'telnet', 'ws', 'wss', 'mailto', 'tel', 'sms', 'news', 'nntp', 'ldap', 'ldaps', 'smb', 'nfs', 'gopher', 'irc', 'ircs',
  'jar', 'view-source', 'chrome', 'chrome-extension', 'intent', 'shell', 'search-ms', 'ms-msdt', 'ms-officecmd', 'ms-word', 'ms-settings', 'svn+ssh', 'c',
];

test('network and system-handler schemes are refused at registration in any case, ms-* as a family (property)', async (t) => {
  const server = await startAuthServer('sqlite', { auth: { registrationsPerMinute: 100_000 } });
  try {
    const before = await rowCounts(server);
    const scheme = fc.oneof(fc.constantFrom(...HANDLER_SCHEMES), fc.stringMatching(/^[a-z][a-z0-9.+-]{0,15}$/).map((rest) => `ms-${rest}`));
    const uri = fc.tuple(scheme, fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }), fc.constantFrom('//evil.example/cb', '/id=x', '//127.0.0.1/cb', '//evil.example/share?query=x'))
      .map(([name, upper, rest]) => `${[...name].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c)).join('')}:${rest}`);
    await fc.assert(fc.asyncProperty(uri, async (redirectUri) => {
      const response = await register(server.url, redirectUri);
      const body = (await response.json()) as { error?: string; error_description?: string };
      const scheme = redirectUri.slice(0, redirectUri.indexOf(':')).toLowerCase();
      return response.status === 400 && body.error === 'invalid_redirect_uri' && body.error_description?.includes(`the ${scheme} scheme`) === true;
    }), { numRuns: 300 });
    t.deepEqual(await rowCounts(server), before, 'no client was registered');

    // The private-use schemes of real native apps keep working: reverse-domain ones (RFC 8252 §7.1) and short app names.
    const reverseDomain = fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{1,8}$/), fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/)).map(([a, b]) => `com.${a}.${b}:/oauth/callback`);
    const apps = ['cursor://anysphere.cursor-retrieval/oauth/callback', 'vscode://vscode.github-authentication/did-authenticate', 'com.example.app:/cb', 'claude://oauth/callback', 'msapp.example:/cb'];
    await fc.assert(fc.asyncProperty(fc.oneof(reverseDomain, fc.constantFrom(...apps)), async (redirectUri) => (await register(server.url, redirectUri)).status === 201), { numRuns: 60 });
  } finally {
    await server.close();
  }
});

for (const kind of databasesUnderTest()) {
  test(`a stored client or a metadata document naming a system-handler scheme gets neither a redirect nor a way back to it [${kind}]`, async (t) => {
    const document = 'https://client.example/oauth/metadata.json';
    const server = await startAuthServer(kind, { auth: { fetch: metadataDocumentFetch(document, { client_name: 'Editor', redirect_uris: ['ms-msdt:/id%20PCWDiagnostic'], token_endpoint_auth_method: 'none' }) } });
    try {
      // An operator's client stored before the check (its errors are redirected at once, A5).
      await addRegisteredClient(server, { clientId: 'reg_follina', name: 'Helper', redirectUri: 'search-ms:query=invoice&crumb=location:evil.example' });
      for (const [clientId, redirectUri] of [['reg_follina', 'search-ms:query=invoice&crumb=location:evil.example'], [document, 'ms-msdt:/id%20PCWDiagnostic']]) {
        const attempt = await startAuthorization(server.url, { clientId, redirectUri, resource: server.forge, scopes });
        const page = await follow(server.url, attempt.jar, attempt.response);
        t.is(page.response.status, 400, clientId);
        t.is(attempt.response.headers.get('location'), null, clientId);
        t.regex(page.html ?? '', /invalid_redirect_uri/, clientId);
        t.notRegex(page.html ?? '', /href="(search-ms|ms-msdt):|Return to/i, clientId);
        t.notRegex(page.html ?? '', /name="password"/, `${clientId}: the sign-in form is offered`);
      }
    } finally {
      await server.close();
    }
  });
}

test('client ID metadata documents on any private, loopback, link-local or mapped address, or over http, are refused without a redirect', async (t) => {
  // The metadata fetch limit would answer 429 after 10 documents (a refused one is fetched twice); this test is about the address check.
  const server = await startAuthServer('sqlite', { auth: { metadataFetchesPerMinute: 100 } });
  try {
    const port = new URL(server.url).port;
    const documents = [
      `https://[::ffff:127.0.0.1]:${port}/m.json`, 'https://[::ffff:7f00:1]/m.json', 'https://10.0.0.1/m.json', 'https://172.16.0.1/m.json', 'https://192.168.1.1/m.json',
      'https://0.0.0.0/m.json', 'https://127.1/m.json', 'https://2130706433/m.json', 'https://0x7f000001/m.json', 'https://[fe80::1]/m.json', 'https://[fc00::1]/m.json',
      'https://100.64.0.1/m.json', 'https://localhost/m.json', `http://client.example/m.json`, 'https://169.254.169.254/latest/meta-data/iam.json',
    ];
    for (const clientId of documents) {
      const attempt = await startAuthorization(server.url, { clientId, redirectUri: 'http://127.0.0.1/callback', resource: server.forge, scopes });
      t.is(attempt.response.status, 400, clientId);
      t.is(attempt.response.headers.get('location'), null, clientId);
    }
    t.is((await fetch(`${server.url}/healthz`)).status, 200);
  } finally {
    await server.close();
  }
});

test('a spoofed X-Forwarded-Host or -Proto is ignored when TRUST_PROXY is off', async (t) => {
  const server = await startAuthServer('sqlite');
  try {
    const metadata = await fetch(`${server.url}/.well-known/oauth-authorization-server`, { headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' } });
    const body = (await metadata.json()) as Record<string, string>;
    t.is(body.issuer, server.url);
    for (const key of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'jwks_uri']) t.true(body[key].startsWith(`${server.url}/`), key);
    const { client_id: clientId } = await registerClient(server.url);
    const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes, extra: {} });
    t.false((auth.response.headers.get('location') ?? '').includes('evil.example'));
  } finally {
    await server.close();
  }
});

for (const kind of databasesUnderTest()) {
  test(`PKCE is required for a pre-registered web client too, and lifetimes are short [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      // A web client an operator registered (not native, not self-registered): PKCE is still required (checklist B2).
      const clientId = 'reg_web-client-000000000000';
      await addRegisteredClient(server, { clientId, name: 'Web app', redirectUri: 'https://app.example/cb' });
      const withoutPkce = await startAuthorization(server.url, { clientId, redirectUri: 'https://app.example/cb', resource: server.forge, scopes, pkce: null });
      const location = new URL(withoutPkce.response.headers.get('location')!);
      t.is(location.origin, 'https://app.example');
      t.is(location.searchParams.get('error'), 'invalid_request');
      t.false(withoutPkce.pageUrl.includes('/oauth/interaction/'));

      // Lifetimes (checklist E7), as the token endpoint reports them and as stored.
      const code = await alice(server);
      const { db } = server.portico.context;
      const stored = await db('oidc_payloads').where({ model: 'AuthorizationCode' }).first();
      t.true(stored.expires_at - Date.now() <= 60_000, 'codes live at most 60 s');
      const response = await tokenRequest(server.url, { grant_type: 'authorization_code', code: code.code, client_id: code.clientId, redirect_uri: code.redirectUri, code_verifier: code.verifier, resource: server.forge });
      const tokens = (await response.json()) as { expires_in: number };
      t.true(tokens.expires_in > 0 && tokens.expires_in <= 3600, `access tokens live at most an hour (${tokens.expires_in} s)`);
      const refreshRow = await db('oidc_payloads').where({ model: 'RefreshToken' }).first();
      t.true(refreshRow.expires_at - Date.now() <= 30 * 86_400_000 + 1000, 'refresh tokens live at most 30 days');
    } finally {
      await server.close();
    }
  });
}
