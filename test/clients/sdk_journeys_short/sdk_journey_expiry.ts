/**
 * A chat assistant's session over time: its access token expires mid-session. The server ends
 * the GET stream at the token's expiry; the SDK reconnects it, is refused 401, refreshes, and the
 * session goes on: calls keep working in the same session and the person is not asked again.
 */
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { auditOf, blinkSurface, mcpTest } from '../../helpers/mcp.js';
import { until } from '../../helpers/poll.js';
import { assistant, expireAccessToken, signedIn, sleep } from '../sdk_journeys_support.js';

mcpTest('an access token expiring mid-session is refreshed by the SDK and the session goes on without asking the person', async (t, server) => {
  const provider = assistant(server);
  // An hour passes in 1.5 s: the token is shortened before its first use (its principal is then cached until its expiry).
  const { client, transport } = await signedIn(server, provider, 'forge', { beforeConnect: () => expireAccessToken(server, provider.tokens()!.access_token, 1500) });
  try {
    const first = provider.tokens()!;
    const sessionId = transport.sessionId;
    t.falsy((await client.callTool({ name: 'forge.list_conversations', arguments: {} })).isError);
    // The token expires; the GET stream ends and is reconnected (1 s later) with a refreshed token.
    // Waited for rather than timed: on a loaded machine the reconnect comes later, and a call made
    // before it is refused with the old token first (audited invalid_token), then retried.
    const refreshed = await until(15_000, async () => (provider.tokens()!.access_token !== first.access_token ? true : undefined), 100);
    t.true(refreshed, 'the reconnecting GET stream refreshed the token');
    const created = await client.callTool({ name: 'forge.create_conversation', arguments: { title: 'After the hour' } });
    t.falsy(created.isError, JSON.stringify(created));
    t.not(provider.tokens()!.access_token, first.access_token, 'the SDK refreshed');
    t.is(transport.sessionId, sessionId, 'the same session went on');
    t.is(provider.requests.length, 1, 'the person was not asked again');
    t.deepEqual(provider.invalidated, []);
    const records = await auditOf(server, 'acme', { name: 'forge.create_conversation' });
    t.deepEqual(records.map((r) => r.outcome), ['ok']);
    // The reconnected GET stream carries the server's notifications again.
    let heard = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      heard = true;
    });
    await until(5000, async () => {
      await blinkSurface(server, 'forge', 'live');
      return heard || undefined;
    }, 200);
    t.true(heard, 'notifications reach the client on the stream opened with the refreshed token');
  } finally {
    await client.close();
  }
});

mcpTest('a call made just as the token expires is refreshed and retried once; the GET stream reconnects with the new token', async (t, server) => {
  const provider = assistant(server);
  let expiresAt = 0;
  const { client, transport, errors } = await signedIn(server, provider, 'forge', { beforeConnect: async () => (expiresAt = await expireAccessToken(server, provider.tokens()!.access_token, 1500)) });
  try {
    const first = provider.tokens()!;
    await sleep(Math.max(0, expiresAt - Date.now()) + 50); // until the token has expired by the server's clock
    // GET reconnects ~1 s after the stream ended; this call lands before that.
    const created = await client.callTool({ name: 'forge.create_conversation', arguments: { title: 'Right at expiry' } });
    t.falsy(created.isError, JSON.stringify(created));
    // The GET stream reconnects with the new token: the server's notifications reach the client again.
    let heard = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      heard = true;
    });
    await until(15_000, async () => {
      await blinkSurface(server, 'forge', 'live');
      return heard || undefined;
    }, 200);
    t.true(heard, 'notifications reach the client on the stream reconnected with the refreshed token');
    t.not(provider.tokens()!.access_token, first.access_token, 'the SDK refreshed');
    t.truthy(transport.sessionId);
    const listed = await client.callTool({ name: 'forge.list_conversations', arguments: {} });
    t.true(JSON.stringify(listed.structuredContent).includes('Right at expiry'));
    t.is(provider.requests.length, 1, 'the person was not asked again');
    t.deepEqual(provider.invalidated, [], `errors seen by the client: ${errors.map(String).join('; ')}`);
  } finally {
    await client.close();
  }
});
