/**
 * The per-connection rate limit counts every MCP request of the connection (docs/security.md "Rate
 * limit": "every MCP request of a connection counts"; docs/errors.md `rate_limited`), GET streams
 * included, DELETE excepted; and its default is the README's 600 a minute. The other rate-limit
 * tests send POSTs with the limit set, so a limiter that let GETs through unbounded (each one a
 * bearer lookup and a stream) or a default of a million passed them.
 */
import test from 'ava';
import { loadConfig } from '../../shared/config.js';
import { grant, mcpTest, openSession, rawCall } from '../helpers/mcp.js';

test('RATE_LIMIT_PER_MINUTE and BODY_LIMIT_BYTES default to the README’s values', (t) => {
  const config = loadConfig({});
  t.is(config.rateLimitPerMinute, 600);
  t.is(config.bodyLimitBytes, 1024 * 1024);
});

mcpTest('GET streams count against the connection’s rate limit; DELETE does not', async (t, server) => {
  const limit = server.config.rateLimitPerMinute;
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge'); // initialize + initialized: two requests
  const get = () => fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  const statuses: number[] = [];
  for (let i = 2; i < limit + 2; i++) {
    const response = await get();
    statuses.push(response.status);
    await response.body?.cancel();
  }
  t.true(statuses.slice(0, limit - 2).every((s) => s !== 429), `under the limit: ${statuses.join(',')}`);
  t.deepEqual(statuses.slice(limit - 2), [429, 429], `over the limit: ${statuses.join(',')}`);
  const call = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId });
  t.is(call.status, 429, 'the GETs spent the connection’s budget');
  const closed = await fetch(`${server.mcpUrl}/forge`, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId } });
  t.not(closed.status, 429, 'closing the session is never limited');
}, { env: { RATE_LIMIT_PER_MINUTE: '6' } });
