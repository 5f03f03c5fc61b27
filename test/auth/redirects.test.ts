/**
 * Redirect URIs (checklist A1-A5): exact match, except that a native client's loopback URI
 * accepts any port (RFC 8252 §7.3); an unregistered or altered URI gets an error page and no
 * redirect; http only on loopback; script-like schemes refused at registration.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeWithPassword, errorReturnOf, metadataDocumentFetch, registerClient, startAuthorization, unescapeHtml } from '../helpers/oauth.js';
import { addRegisteredClient, PASSWORD, rowCounts, startAuthServer } from './support.js';

const scopes = ['forge.chat.read'];

for (const kind of databasesUnderTest()) {
  test(`an unregistered or altered redirect URI gets an error page and no redirect [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { client_id: clientId } = await registerClient(server.url, { redirect_uris: ['https://c.example/cb'] });
      const altered = [
        'https://c.example/cb/', 'https://c.example/cb?x=1', 'https://c.example/CB', 'https://c.example/cb/../cb', 'https://c.example@evil.example/cb',
        'https://c.example.evil.example/cb', 'https://c.example/%63b', 'https://c.example/cb ', 'https://c.example/cb#frag', 'http://c.example/cb',
        'https://c.example:8443/cb', 'https://evil.example/cb',
      ];
      for (const redirectUri of altered) {
        const attempt = await startAuthorization(server.url, { clientId, redirectUri, resource: server.forge, scopes });
        t.is(attempt.response.status, 400, redirectUri);
        t.is(attempt.response.headers.get('location'), null, `no redirect for ${redirectUri}`);
        const html = await attempt.response.text();
        t.regex(html, /redirect_uri did not match any of the client's registered redirect_uris|invalid_redirect_uri/, redirectUri);
        t.is(attempt.response.headers.get('x-frame-options'), 'DENY');
        t.regex(attempt.response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
      }
      const unknownClient = await startAuthorization(server.url, { clientId: 'dcr_nobody', redirectUri: 'https://c.example/cb', resource: server.forge, scopes });
      t.is(unknownClient.response.status, 400);
      t.is(unknownClient.response.headers.get('location'), null);

      const registered = await startAuthorization(server.url, { clientId, redirectUri: 'https://c.example/cb', resource: server.forge, scopes });
      t.is(registered.response.status, 303);
      t.regex(registered.pageUrl, /\/oauth\/interaction\//);
    } finally {
      await server.close();
    }
  });

  test(`an authorization error for a self-registered client is a page with a way back, not a redirect; an administrator's client is redirected [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'Totally Legit', redirect_uris: ['https://c.example/cb'] });
      const request = { clientId, redirectUri: 'https://c.example/cb', resource: server.forge, scopes, pkce: null };

      // No PKCE: an error the provider would send to the client's redirect URI at once (checklist A5(b)).
      const query = await startAuthorization(server.url, request);
      t.is(query.response.headers.get('x-frame-options'), 'DENY');
      const html = await query.response.clone().text();
      t.notRegex(html, /<script|http-equiv="refresh"/i, 'nothing leaves the page by itself');
      t.regex(html, /Totally Legit/);
      t.regex(html, /c\.example/, 'the page says where the way back leads');
      const back = await errorReturnOf(query.response);
      t.is(`${back.origin}${back.pathname}`, 'https://c.example/cb');
      t.is(back.searchParams.get('error'), 'invalid_request');
      t.is(back.searchParams.get('state'), query.state);
      t.is(back.searchParams.get('iss'), server.url);

      // response_mode=form_post: the provider's page posts itself; this one waits for the person.
      const posted = await startAuthorization(server.url, { ...request, extra: { response_mode: 'form_post' } });
      t.is(posted.response.status, 400);
      t.is(posted.response.headers.get('location'), null);
      const form = await posted.response.text();
      t.notRegex(form, /<script/i);
      t.is(unescapeHtml(/<form method="post" action="([^"]*)"/.exec(form)?.[1] ?? ''), 'https://c.example/cb');
      const fields = Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [unescapeHtml(m[1]), unescapeHtml(m[2])]));
      t.like(fields, { error: 'invalid_request', state: posted.state, iss: server.url });

      // A pre-registered client's redirect URI is an administrator's: the error goes back at once.
      const registeredId = 'reg_test-client-0000000000';
      await addRegisteredClient(server, { clientId: registeredId, name: 'Acme Assistant', redirectUri: 'https://assistant.acme.example/cb' });
      const registered = await startAuthorization(server.url, { ...request, clientId: registeredId, redirectUri: 'https://assistant.acme.example/cb' });
      t.is(registered.response.status, 303);
      const redirect = new URL(registered.response.headers.get('location')!);
      t.is(`${redirect.origin}${redirect.pathname}`, 'https://assistant.acme.example/cb');
      t.is(redirect.searchParams.get('error'), 'invalid_request');

      // The self-registered client's valid request still goes to sign-in as before.
      const valid = await startAuthorization(server.url, { ...request, pkce: undefined });
      t.is(valid.response.status, 303);
      t.regex(valid.pageUrl, /\/oauth\/interaction\//);
    } finally {
      await server.close();
    }
  });

  test(`an authorization error for a metadata-document client is a page with a way back, not a redirect [${kind}]`, async (t) => {
    // A client ID metadata document is whatever anyone hosts at an https URL: its redirect URIs are
    // no more vouched for than a self-registered client's (checklist A5(b)).
    const clientId = 'https://client.example/oauth/metadata.json';
    const server = await startAuthServer(kind, { auth: { fetch: metadataDocumentFetch(clientId, { client_name: 'Hosted Anywhere', redirect_uris: ['https://c.example/cb'], token_endpoint_auth_method: 'none' }) } });
    try {
      const request = { clientId, redirectUri: 'https://c.example/cb', resource: server.forge, scopes };
      for (const [label, error, attempt] of [
        ['no PKCE', 'invalid_request', await startAuthorization(server.url, { ...request, pkce: null })],
        ['an unknown scope', 'invalid_scope', await startAuthorization(server.url, { ...request, scopes: ['bogus'] })],
      ] as const) {
        t.is(attempt.response.headers.get('location'), null, label);
        t.regex(await attempt.response.clone().text(), /Hosted Anywhere/, label);
        const back = await errorReturnOf(attempt.response);
        t.is(`${back.origin}${back.pathname}`, 'https://c.example/cb', label);
        t.is(back.searchParams.get('error'), error, label);
        t.is(back.searchParams.get('state'), attempt.state, label);
        t.is(back.searchParams.get('iss'), server.url, label);
      }
      // The valid request goes to sign-in as before.
      const valid = await startAuthorization(server.url, request);
      t.is(valid.response.status, 303);
      t.regex(valid.pageUrl, /\/oauth\/interaction\//);
    } finally {
      await server.close();
    }
  });

  test(`a loopback redirect URI works on any port, but only with the same scheme, host and path [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const client = await registerClient(server.url, { redirect_uris: ['http://127.0.0.1/callback'], application_type: 'web' });
      t.is(client.application_type, 'native', 'loopback redirect URIs make the client native');
      const tokens = await authorizeWithPassword(server.url, {
        email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientId: client.client_id, redirectUri: 'http://127.0.0.1:54321/callback',
      });
      t.truthy(tokens.accessToken);
      for (const redirectUri of ['http://127.0.0.1:54321/other', 'http://127.0.0.2:54321/callback', 'http://localhost:54321/callback', 'https://127.0.0.1:54321/callback', 'http://127.0.0.1:5@evil.example/callback']) {
        const attempt = await startAuthorization(server.url, { clientId: client.client_id, redirectUri, resource: server.forge, scopes });
        t.is(attempt.response.status, 400, redirectUri);
        t.is(attempt.response.headers.get('location'), null, redirectUri);
      }
    } finally {
      await server.close();
    }
  });

  test(`custom schemes register for native clients; http off loopback and script schemes do not [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const cursor = await registerClient(server.url, { redirect_uris: ['cursor://anysphere.cursor-retrieval/oauth/callback'] });
      t.is(cursor.application_type, 'native');
      const attempt = await startAuthorization(server.url, { clientId: cursor.client_id, redirectUri: 'cursor://anysphere.cursor-retrieval/oauth/callback', resource: server.forge, scopes });
      t.regex(attempt.pageUrl, /\/oauth\/interaction\//);

      const before = await rowCounts(server);
      for (const uri of ['http://c.example/cb', 'JavaScript:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', 'java\u0000script:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'https://c.example/cb#x', 'https://user:pw@c.example/cb', 'not a uri']) {
        const response = await fetch(`${server.url}/oauth/register`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [uri], token_endpoint_auth_method: 'none' }),
        });
        t.is(response.status, 400, JSON.stringify(uri));
        const body = (await response.json()) as { error: string };
        t.true(['invalid_redirect_uri', 'invalid_client_metadata'].includes(body.error), `${JSON.stringify(uri)}: ${body.error}`);
      }
      t.deepEqual(await rowCounts(server), before, 'refused registrations write nothing');
    } finally {
      await server.close();
    }
  });
}
