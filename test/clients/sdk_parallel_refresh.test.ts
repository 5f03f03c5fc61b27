/**
 * Two tool calls of one chat assistant in parallel (models call tools in parallel) just after its
 * access token expired: both get 401 and the SDK refreshes twice with the same refresh token. The
 * grace window keeps the connection alive (docs/auth.md "parallel refreshes"), but the slower
 * refresh is answered invalid_grant; the SDK then forgets its tokens (invalidateCredentials, as
 * real clients implement it) and sends the person to sign in and consent again, and the call fails.
 *
 * Kept as a known failure: Portico refuses the second refresh on purpose (docs/auth.md: a refresh
 * token is used once, never two chains; the 10 s grace window only spares the connection). A client
 * that refreshes once for parallel calls (single-flight) is not affected. When this passes, ava
 * reports it, and `.failing` must be removed.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { startMcpServer } from '../helpers/mcp.js';
import { assistant, expireAccessToken, signedIn, sleep } from './sdk_journeys_support.js';

for (const kind of databasesUnderTest()) {
  test.failing(`two parallel calls at token expiry are both answered without asking the person again [${kind}]`, async (t) => {
    const server = await startMcpServer(kind);
    t.teardown(() => server.close());
    const provider = assistant(server);
    let expiresAt = 0;
    const { client } = await signedIn(server, provider, 'forge', {}, async () => (expiresAt = await expireAccessToken(server, provider.tokens()!.access_token, 1500)));
    try {
      await sleep(Math.max(0, expiresAt - Date.now()) + 50);
      const results = await Promise.allSettled([
        client.callTool({ name: 'forge.list_conversations', arguments: {} }),
        client.callTool({ name: 'forge.create_conversation', arguments: { title: 'In parallel' } }),
      ]);
      t.deepEqual(results.map((r) => (r.status === 'fulfilled' ? 'answered' : String(r.reason))), ['answered', 'answered']);
      t.is(provider.requests.length, 1, 'the person was sent to sign in and consent again');
      t.deepEqual(provider.invalidated, [], 'the client was told its refresh token was invalid');
      t.is((await server.db('connections')).length, 1, 'a second connection was made for the same client and person');
    } finally {
      await client.close();
    }
  });
}
