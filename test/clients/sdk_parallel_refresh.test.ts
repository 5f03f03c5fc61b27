/**
 * Two tool calls of one chat assistant in parallel (models call tools in parallel) just after its
 * access token expired: both get 401 and the SDK refreshes twice with the same refresh token.
 * The slower refresh repeats the first inside the grace window, so it gets the first one's answer
 * (auth/refresh_repeat.ts, docs/auth.md "parallel refreshes"): both calls are answered, the person
 * is not asked again, and the client keeps one connection. Before, the slower refresh was refused
 * invalid_grant; the SDK then forgot its tokens (invalidateCredentials, as real clients implement
 * it) and sent the person to sign in and consent again.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { startMcpServer } from '../helpers/mcp.js';
import { assistant, expireAccessToken, signedIn, sleep } from './sdk_journeys_support.js';

for (const kind of databasesUnderTest()) {
  test(`two parallel calls at token expiry are both answered without asking the person again [${kind}]`, async (t) => {
    const server = await startMcpServer(kind);
    t.teardown(() => server.close());
    const provider = assistant(server);
    let expiresAt = 0;
    const { client } = await signedIn(server, provider, 'forge', {}, async () => (expiresAt = await expireAccessToken(server, provider.tokens()!.access_token, 1500)));
    try {
      await sleep(Math.max(0, expiresAt - Date.now()) + 50); // until the token has expired by the server's clock
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
