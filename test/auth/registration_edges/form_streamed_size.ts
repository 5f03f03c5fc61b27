/**
 * docs/auth.md: the token, revocation and introspection endpoints answer a body over their cap
 * (oidc-provider's 56 KiB read cap) with 413 `payload_too_large`. A body streamed without
 * Content-Length was read up to the cap and then answered 400 "failed to parse the request body",
 * while the same body with a Content-Length got the 413: both are the same oversized body.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { registerClient } from '../../helpers/oauth.js';
import { startAuthServer, streamedPost } from '../support.js';

/** A form POST whose body is streamed, with no Content-Length. */
function streamedForm(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return streamedPost(url, body, { 'content-type': 'application/x-www-form-urlencoded', ...headers });
}

for (const kind of databasesUnderTest()) {
  test(`a streamed body over the token, revocation or introspection endpoint's cap is 413 payload_too_large, like a declared one [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const client = await registerClient(server.url);
      for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect']) {
        for (const kib of [60, 200]) {
          const response = await streamedForm(`${server.url}${path}`, `grant_type=refresh_token&client_id=${client.client_id}&token=x&refresh_token=x&pad=${'a'.repeat(kib * 1024)}`, { origin: 'https://app.example' });
          t.is(response.status, 413, `${path}, ${kib} KiB streamed`);
          t.is(response.headers.get('cache-control'), 'no-store', `${path}, ${kib} KiB streamed`);
          t.is(response.headers.get('access-control-allow-origin'), 'https://app.example', `${path}: a browser-based client can read why`);
          const body = (await response.json()) as { error: string; error_description: string };
          t.is(body.error, 'payload_too_large', `${path}, ${kib} KiB streamed`);
          t.regex(body.error_description, /at most 57344 bytes/, `${path}, ${kib} KiB streamed`);
        }
      }
      // A streamed body under the cap is answered as before.
      const small = await streamedForm(`${server.url}/oauth/token`, `grant_type=refresh_token&client_id=${client.client_id}&refresh_token=unknown`);
      t.is(small.status, 400);
      t.is(((await small.json()) as { error: string }).error, 'invalid_grant');
      const introspected = await streamedForm(`${server.url}/oauth/introspect`, `client_id=${client.client_id}&token=unknown`);
      t.is(introspected.status, 200);
      t.deepEqual(await introspected.json(), { active: false });
    } finally {
      await server.close();
    }
  });
}
