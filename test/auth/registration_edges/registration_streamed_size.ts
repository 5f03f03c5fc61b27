/**
 * docs/auth.md ("registration abuse") and docs/errors.md: registration bodies over 16 KiB are
 * refused 413 `payload_too_large`, "whether declared in Content-Length or streamed without it".
 * A streamed body larger than oidc-provider's own 56 KiB read cap is as much over the limit as one
 * of 20 KiB, and must get the same answer rather than the provider's "failed to parse the request
 * body" (400), and must write nothing.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { rowCounts, startAuthServer, streamedPost } from '../support.js';

/** A registration whose body is streamed, with no Content-Length. */
function streamedRegistration(url: string, body: string): Promise<Response> {
  return streamedPost(`${url}/oauth/register`, body, { 'content-type': 'application/json' });
}

for (const kind of databasesUnderTest()) {
  test(`a streamed registration body over oidc-provider's read cap is 413 payload_too_large, like a smaller oversized one [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const before = await rowCounts(server);
      for (const kib of [20, 60, 200]) {
        const response = await streamedRegistration(server.url, JSON.stringify({ redirect_uris: ['https://c.example/cb'], client_name: 'x', pad: 'z'.repeat(kib * 1024) }));
        t.is(response.status, 413, `${kib} KiB streamed`);
        const body = (await response.json()) as { error: string; error_description: string };
        t.is(body.error, 'payload_too_large', `${kib} KiB streamed`);
        t.regex(body.error_description, /16384 bytes/, `${kib} KiB streamed`);
      }
      t.deepEqual(await rowCounts(server), before, 'nothing was registered');
      // A registration of ordinary size still works.
      const ok = await streamedRegistration(server.url, JSON.stringify({ redirect_uris: ['https://c.example/cb'], client_name: 'Small' }));
      t.is(ok.status, 201);
    } finally {
      await server.close();
    }
  });
}
