/**
 * Client registration (RFC 7591) and client ID metadata documents: public clients only,
 * bounded (size, redirect URI count, rate), clear errors that write nothing, CORS for browser
 * clients; metadata-document clients fetched through an injectable fetch.
 */
import test from 'ava';
import { findConnectionByGrant, authenticateBearer } from '../../db/grant_store.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeCode, CookieJar, exchangeCode, follow, parseForm, postForm, registerClient, startAuthorization } from '../helpers/oauth.js';
import { PASSWORD, rowCounts, startAuthServer } from './support.js';

function register(url: string, body: string, headers: Record<string, string> = {}, path = '/oauth/register') {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

/** A stand-in for the web: serves one client ID metadata document, 404 for anything else, and notes every URL fetched. */
function metadataDocumentHost() {
  const clientId = 'https://client.example/oauth/metadata.json';
  const fetched: string[] = [];
  const fetchDocument = async (input: string | URL | Request) => {
    const url = String(input instanceof Request ? input.url : input);
    fetched.push(url);
    if (url !== clientId) return new Response('not found', { status: 404 });
    return Response.json({ client_id: clientId, client_name: 'Metadata App', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] });
  };
  return { clientId, fetched, fetchDocument };
}

for (const kind of databasesUnderTest()) {
  test(`registration returns a public client with registration_client_uri, even when a secret was asked for [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const client = await registerClient(server.url, { token_endpoint_auth_method: 'client_secret_post', client_name: 'Wants a secret' });
      t.is(client.token_endpoint_auth_method, 'none');
      t.false('client_secret' in client);
      t.regex(client.client_id, /^dcr_[\w-]{22}$/);
      t.is(client.registration_client_uri, `${server.url}/oauth/register/${client.client_id}`);
      const stored = await server.portico.context.db('oidc_payloads').where({ model: 'Client', id: client.client_id }).first();
      t.false(JSON.parse(stored.payload).client_secret !== undefined, 'no secret stored');

      const read = await fetch(client.registration_client_uri!, { headers: { authorization: `Bearer ${client.registration_access_token}` } });
      t.is(read.status, 200);
      t.is(((await read.json()) as { client_id: string }).client_id, client.client_id);
      t.is((await fetch(client.registration_client_uri!)).status, 401, 'reading it needs the registration access token');

      const chosen = await registerClient(server.url, { client_id: 'reg_i-am-an-admin-client' });
      t.regex(chosen.client_id, /^dcr_/, 'a client cannot choose its id, nor pose as a pre-registered client');
    } finally {
      await server.close();
    }
  });

  test(`malformed, oversized or invalid registrations get clear errors and write nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const before = await rowCounts(server);
      const cases: Array<[string, Response, number, string]> = [
        ['malformed JSON', await register(server.url, '{"redirect_uris": ['), 400, 'invalid_request'],
        ['a JSON array', await register(server.url, '[]'), 400, 'invalid_request'],
        ['not JSON', await register(server.url, 'redirect_uris=x', { 'content-type': 'application/x-www-form-urlencoded' }), 400, 'invalid_request'],
        ['redirect_uris of the wrong type', await register(server.url, JSON.stringify({ redirect_uris: 'https://c.example/cb' })), 400, 'invalid_redirect_uri'],
        ['no redirect_uris', await register(server.url, JSON.stringify({ client_name: 'x' })), 400, 'invalid_redirect_uri'],
        ['eleven redirect URIs', await register(server.url, JSON.stringify({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://c.example/cb${i}`) })), 400, 'invalid_client_metadata'],
        ['an unknown scope', await register(server.url, JSON.stringify({ redirect_uris: ['https://c.example/cb'], scope: 'admin.everything.write' })), 400, 'invalid_client_metadata'],
        ['a 100 KiB body', await register(server.url, JSON.stringify({ redirect_uris: ['https://c.example/cb'], client_name: 'x'.repeat(100 * 1024) })), 413, 'payload_too_large'],
      ];
      // Without Content-Length the body is streamed; the cap applies to what was sent, unknown
      // properties included (they are dropped before the metadata is stored).
      const streamed = (metadata: unknown) => fetch(`${server.url}/oauth/register`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, duplex: 'half',
        body: new ReadableStream({ start(controller) { controller.enqueue(new TextEncoder().encode(JSON.stringify(metadata))); controller.close(); } }),
      } as RequestInit);
      cases.push(['a 20 KiB streamed body', await streamed({ redirect_uris: ['https://c.example/cb'], client_name: 'y'.repeat(20 * 1024) }), 413, 'payload_too_large']);
      cases.push(['a 20 KiB streamed body of unknown properties', await streamed({ redirect_uris: ['https://c.example/cb'], pad: 'z'.repeat(20 * 1024) }), 413, 'payload_too_large']);
      cases.push(['a 201-character client_name', await register(server.url, JSON.stringify({ redirect_uris: ['https://c.example/cb'], client_name: 'n'.repeat(201) })), 400, 'invalid_client_metadata']);
      cases.push(['a blank client_name', await register(server.url, JSON.stringify({ redirect_uris: ['https://c.example/cb'], client_name: '  ' })), 400, 'invalid_client_metadata']);
      cases.push(['a client_name with NUL', await register(server.url, JSON.stringify({ redirect_uris: ['https://c.example/cb'], client_name: 'a\u0000b' })), 400, 'invalid_client_metadata']);
      const descriptions = new Map<string, string>();
      for (const [label, response, status, error] of cases) {
        t.is(response.status, status, label);
        const body = (await response.json()) as { error: string; error_description: string };
        t.is(body.error, error, label);
        t.truthy(body.error_description, label);
        descriptions.set(label, body.error_description);
      }
      // Portico's own reason, not the authorize step's "did not match any of the client's registered redirect_uris".
      for (const [label, uris, reason] of [
        ['an http redirect off loopback', ['http://evil.example/cb'], /loopback/],
        ['a fragment', ['http://127.0.0.1/cb#frag'], /fragment/],
        ['a javascript: URI', ['javascript:alert(1)'], /scheme/],
      ] as const) {
        const response = await register(server.url, JSON.stringify({ redirect_uris: uris }));
        const body = (await response.json()) as { error: string; error_description: string };
        t.is(body.error, 'invalid_redirect_uri', label);
        t.regex(body.error_description, reason, label);
      }
      t.deepEqual(await rowCounts(server), before);
      t.is((await fetch(`${server.url}/healthz`)).status, 200, 'still serving');
    } finally {
      await server.close();
    }
  });

  test(`a registration nested deeper than 64 levels is invalid_request, not a server error, and writes nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const before = await rowCounts(server);
      // Levels counted from the body itself: `{"x": [...]}` holding n arrays is n + 1 deep.
      const nested = (arrays: number) => `{"redirect_uris":["https://c.example/cb"],"x":${'['.repeat(arrays)}${']'.repeat(arrays)}}`;
      for (const arrays of [7_000, 64]) {
        const body = nested(arrays);
        t.true(Buffer.byteLength(body) < 16 * 1024, 'under the size cap: the depth alone is refused');
        const response = await register(server.url, body);
        t.is(response.status, 400, `${arrays} arrays`);
        const answer = (await response.json()) as { error: string; error_description: string };
        t.is(answer.error, 'invalid_request', `${arrays} arrays`);
        t.is(answer.error_description, 'client metadata must not be nested deeper than 64 levels');
      }
      t.deepEqual(await rowCounts(server), before);
      t.is((await register(server.url, nested(63))).status, 201, '64 levels are accepted (the unknown property is dropped)');
      t.is((await fetch(`${server.url}/healthz`)).status, 200, 'still serving');
      t.false(server.logs.some((line) => JSON.parse(line).level === 'error'), 'no server error logged');
    } finally {
      await server.close();
    }
  });

  test(`the token, revocation and introspection endpoints answer a body over their cap with 413, and a method they do not answer with 405 [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect']) {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=refresh_token&client_id=x&token=${'a'.repeat(100 * 1024)}`,
        });
        t.is(response.status, 413, path);
        const body = (await response.json()) as { error: string; error_description: string };
        t.is(body.error, 'payload_too_large', path);
        t.regex(body.error_description, /at most 57344 bytes/, path);
      }
      // Under the cap the endpoints answer as before.
      const small = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&client_id=x&refresh_token=y' });
      t.is(small.status, 401);
      // A method an endpoint does not answer is 405 with Allow, as on every other route, not a 404.
      for (const [method, path, allow] of [['GET', '/oauth/token', 'POST, OPTIONS'], ['PUT', '/oauth/revoke', 'POST, OPTIONS'], ['GET', '/oauth/introspect', 'POST, OPTIONS'], ['GET', '/oauth/register', 'POST, OPTIONS'], ['DELETE', '/oauth/authorize', 'GET'], ['POST', '/oauth/authorize', 'GET'], ['POST', '/oauth/jwks', 'GET, HEAD, OPTIONS'], ['DELETE', '/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS']] as const) {
        const response = await fetch(`${server.url}${path}`, { method });
        t.is(response.status, 405, `${method} ${path}`);
        t.is(response.headers.get('allow'), allow, `${method} ${path}`);
        t.is(((await response.json()) as { error: string }).error, 'method_not_allowed', `${method} ${path}`);
      }
      t.is((await fetch(`${server.url}/oauth/jwks`)).status, 200);
      // An authorization request sent as a form POST (OAuth 2.1 §4.1.1 lets a server offer it;
      // Portico does not) is told to use GET, not answered 404 "no route" as if the endpoint did not exist.
      const posted = await fetch(`${server.url}/oauth/authorize`, {
        method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=x&response_type=code&scope=forge.chat.read',
      });
      t.is(posted.status, 405);
      t.is(posted.headers.get('allow'), 'GET');
      const refusal = (await posted.json()) as { error: string; error_description: string };
      t.is(refusal.error, 'method_not_allowed');
      t.is(refusal.error_description, 'POST is not supported here; use GET');
    } finally {
      await server.close();
    }
  });

  test(`an OPTIONS request that is not a CORS preflight gets 204 with Allow at every endpoint that lists OPTIONS, not a bare 404 [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const endpoints = [
        ['/oauth/token', 'POST, OPTIONS'], ['/oauth/revoke', 'POST, OPTIONS'], ['/oauth/introspect', 'POST, OPTIONS'], ['/oauth/register', 'POST, OPTIONS'],
        ['/oauth/jwks', 'GET, HEAD, OPTIONS'], ['/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS'], ['/.well-known/openid-configuration', 'GET, HEAD, OPTIONS'],
        ['/OAUTH/Token/', 'POST, OPTIONS'],
      ] as const;
      // No Origin (a server-side client asking what the endpoint allows), or an Origin without
      // Access-Control-Request-Method: neither is a preflight (Fetch, "CORS-preflight request").
      for (const headers of [{}, { origin: 'https://app.example' }] as Array<Record<string, string>>) {
        for (const [path, allow] of endpoints) {
          const label = `OPTIONS ${path} ${JSON.stringify(headers)}`;
          const response = await fetch(`${server.url}${path}`, { method: 'OPTIONS', headers });
          t.is(response.status, 204, `${label}: ${await response.text()}`);
          if (path !== '/oauth/register') t.is(response.headers.get('allow'), allow, label);
        }
      }
      // A real preflight is still oidc-provider's, with its CORS headers.
      const preflight = await fetch(`${server.url}/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
      t.is(preflight.status, 204);
      t.is(preflight.headers.get('access-control-allow-origin'), 'https://app.example');
      t.regex(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
      // The authorization endpoint does not list OPTIONS: 405 as before.
      const authorize = await fetch(`${server.url}/oauth/authorize`, { method: 'OPTIONS' });
      t.is(authorize.status, 405);
      t.is(authorize.headers.get('allow'), 'GET');
    } finally {
      await server.close();
    }
  });

  test(`registration is rate limited per address with Retry-After [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { auth: { registrationsPerMinute: 3 } });
    try {
      for (let i = 0; i < 3; i++) await registerClient(server.url);
      const limited = await register(server.url, JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'] }));
      t.is(limited.status, 429);
      t.regex(limited.headers.get('retry-after') ?? '', /^\d+$/);
      t.is(((await limited.json()) as { error: string }).error, 'rate_limited');
      t.is((await rowCounts(server)).clients, 3);
    } finally {
      await server.close();
    }
  });

  test(`every spelling of the registration endpoint oidc-provider answers counts against one limit, and the method and body guards know them too [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { auth: { registrationsPerMinute: 3 } });
    try {
      // oidc-provider routes these to registration (its router ignores the case of letters and one trailing slash).
      for (const path of ['/oauth/register/', '/OAUTH/REGISTER', '/oauth/Register']) {
        const response = await register(server.url, JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'] }), {}, path);
        t.is(response.status, 201, path);
      }
      for (const path of ['/oauth/register', '/OAUTH/REGISTER/', '/oauth/Register']) {
        const limited = await register(server.url, JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'] }), {}, path);
        t.is(limited.status, 429, path);
        t.regex(limited.headers.get('retry-after') ?? '', /^\d+$/, path);
        t.is(limited.headers.get('access-control-allow-origin'), '*', path);
        t.is(((await limited.json()) as { error: string }).error, 'rate_limited', path);
      }
      t.is((await rowCounts(server)).clients, 3);

      // Each 405 with the endpoint's CORS, as under its own spelling: registration's is `*`, the authorization endpoint has none.
      for (const [method, path, allow, origin] of [
        ['GET', '/OAUTH/TOKEN', 'POST, OPTIONS', 'https://app.example'], ['PUT', '/oauth/revoke/', 'POST, OPTIONS', 'https://app.example'],
        ['GET', '/oauth/Register/', 'POST, OPTIONS', '*'], ['DELETE', '/OAUTH/AUTHORIZE', 'GET', null], ['POST', '/oauth/Authorize/', 'GET', null], ['POST', '/oauth/JWKS/', 'GET, HEAD, OPTIONS', 'https://app.example'],
      ] as const) {
        const response = await fetch(`${server.url}${path}`, { method, headers: { origin: 'https://app.example' } });
        t.is(response.status, 405, `${method} ${path}`);
        t.is(response.headers.get('allow'), allow, `${method} ${path}`);
        t.is(response.headers.get('access-control-allow-origin'), origin, `${method} ${path}`);
        t.is(((await response.json()) as { error: string }).error, 'method_not_allowed', `${method} ${path}`);
      }
      for (const path of ['/OAUTH/TOKEN', '/oauth/revoke/', '/oauth/Introspect']) {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=refresh_token&client_id=x&token=${'a'.repeat(100 * 1024)}`,
        });
        t.is(response.status, 413, path);
        t.is(((await response.json()) as { error: string }).error, 'payload_too_large', path);
      }
    } finally {
      await server.close();
    }
  });

  test(`a client ID metadata document client is fetched, marked as such on the consent page, and gets a connection [${kind}]`, async (t) => {
    const { clientId, fetched, fetchDocument } = metadataDocumentHost();
    const server = await startAuthServer(kind, { auth: { fetch: fetchDocument as typeof fetch } });
    try {
      const auth = await startAuthorization(server.url, { clientId, redirectUri: 'http://127.0.0.1:4000/callback', resource: server.forge, scopes: ['forge.chat.read'] });
      const signIn = await follow(server.url, auth.jar, auth.response);
      const login = parseForm(signIn.html!);
      const page = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
      t.regex(page.html!, /Metadata App/);
      t.regex(page.html!, /identified by its web address/);
      t.true(page.html!.includes(`<code>${clientId}</code>`));
      t.deepEqual(fetched, [clientId]);

      const code = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'], clientId, redirectUri: 'http://127.0.0.1:4000/callback' });
      const tokens = await exchangeCode(server.url, { ...code, resource: server.forge });
      const principal = await authenticateBearer(server.portico.context.db, tokens.accessToken, server.forge);
      t.is((await findConnectionByGrant(server.portico.context.db, principal.grantId))?.client_kind, 'metadata_document');
      t.is((await rowCounts(server)).clients, 0, 'metadata-document clients are not stored as registrations');
    } finally {
      await server.close();
    }
  });

  test(`client ID metadata documents are fetched at most so many times a minute per address; a cached one is still served [${kind}]`, async (t) => {
    const { clientId, fetched, fetchDocument } = metadataDocumentHost();
    const server = await startAuthServer(kind, { auth: { fetch: fetchDocument as typeof fetch, metadataFetchesPerMinute: 5 } });
    try {
      const authorize = (id: string) => startAuthorization(server.url, { clientId: id, redirectUri: 'http://127.0.0.1:4000/callback', resource: server.forge, scopes: ['forge.chat.read'] });
      t.truthy((await authorize(clientId)).pageUrl, 'the document is fetched and the sign-in follows');
      // A document that cannot be fetched is asked for twice per request (the error report looks again).
      for (const i of [1, 2]) t.is((await authorize(`https://elsewhere.example/${i}.json`)).response.status, 400);
      t.is(fetched.length, 5);
      for (const i of [3, 4, 5]) {
        const { response } = await authorize(`https://elsewhere.example/${i}.json`);
        t.is(response.status, 429, `document ${i}`);
        t.is(response.headers.get('location'), null);
        t.true(Number(response.headers.get('retry-after')) >= 1);
        t.regex(await response.text(), /Error code <code>rate_limited<\/code>/);
      }
      const token = await fetch(`${server.url}/oauth/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', client_id: 'https://elsewhere.example/6.json', code_verifier: 'v'.repeat(43) }),
      });
      t.is(token.status, 429);
      t.is(((await token.json()) as { error: string }).error, 'rate_limited');
      t.is(fetched.length, 5, 'nothing more was fetched');
      t.truthy((await authorize(clientId)).pageUrl, 'the cached document needs no fetch');
    } finally {
      await server.close();
    }
  });
}

test('without an injected fetch, metadata documents on loopback or private addresses are refused', async (t) => {
  const server = await startAuthServer('sqlite');
  try {
    for (const clientId of [`https://127.0.0.1:${new URL(server.url).port}/metadata.json`, 'https://169.254.169.254/latest/meta-data.json', 'https://[::1]/metadata.json']) {
      const attempt = await startAuthorization(server.url, { clientId, redirectUri: 'http://127.0.0.1/callback', resource: server.forge, scopes: ['forge.chat.read'] });
      t.is(attempt.response.status, 400, clientId);
      t.is(attempt.response.headers.get('location'), null, clientId);
    }
  } finally {
    await server.close();
  }
});

test('discovery and registration answer CORS preflights; the authorization endpoint does not', async (t) => {
  const server = await startAuthServer('sqlite');
  try {
    const preflight = (path: string) => fetch(`${server.url}${path}`, { method: 'OPTIONS', headers: { origin: 'https://inspector.example', 'access-control-request-method': path.includes('register') ? 'POST' : 'GET', 'access-control-request-headers': 'content-type' } });
    const registration = await preflight('/oauth/register');
    t.is(registration.status, 204);
    t.is(registration.headers.get('access-control-allow-origin'), '*');
    t.regex(registration.headers.get('access-control-allow-methods') ?? '', /POST/);
    const discovery = await preflight('/.well-known/oauth-authorization-server');
    t.is(discovery.headers.get('access-control-allow-origin'), 'https://inspector.example');
    const authorize = await preflight('/oauth/authorize');
    t.is(authorize.headers.get('access-control-allow-origin'), null);
    const jar = new CookieJar();
    const client = await registerClient(server.url, { redirect_uris: ['https://app.example/cb'] });
    const token = await jar.fetch(`${server.url}/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    t.is(token.status, 204);
    t.truthy(client.client_id);
  } finally {
    await server.close();
  }
});
