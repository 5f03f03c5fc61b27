/**
 * The per-connection rate limit counts every MCP request of the connection (docs/security.md "Rate
 * limit": "every MCP request of a connection counts"; docs/errors.md `rate_limited`), GET streams
 * included; DELETE, a cancellation and an answer to the server's own request excepted; and its
 * default is the README's 600 a minute. The other rate-limit tests send POSTs with the limit set,
 * so a limiter that let GETs through unbounded (each one a bearer lookup and a stream) or a
 * default of a million passed them.
 */
import test from 'ava';
import { loadConfig } from '../../shared/config.js';
import { auditOf, connect, grant, mcpTest, openSession, rawCall, type McpTestServer } from '../helpers/mcp.js';

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

/** Sends requests on the connection of `token` until one is refused 429: the connection's budget is spent. */
async function spendBudget(server: McpTestServer, token: string, sessionId: string): Promise<void> {
  for (let i = 0; i <= server.config.rateLimitPerMinute; i++) {
    if ((await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId })).status === 429) return;
  }
  throw new Error('the rate limit never refused a request');
}

mcpTest('over its rate limit a connection can still answer the person’s confirmation the server asked for, and cancel a call', async (t, server) => {
  const target = async () => server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).orderBy('id').first('id');
  // The person accepts, after the connection's budget was spent while they were being asked.
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
  const spare = await openSession(server, token, 'forge');
  const accepting = await connect(server, {
    product: 'forge', tenant: 'acme', scopes: [], token,
    elicit: async () => {
      await spendBudget(server, token, spare);
      return { action: 'accept', content: { confirm: true } };
    },
  });
  try {
    const first = await target();
    const result = await accepting.client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: first.id } }).catch((e: Error) => e);
    t.false(result instanceof Error, `the call ended as ${String(result)}`);
    t.falsy((result as { isError?: boolean }).isError, JSON.stringify(result));
    t.falsy(await server.db('forge_conversations').where({ id: first.id }).first(), 'the person’s answer reached the server: deleted');
    t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.delete_conversation' })).map((r) => r.outcome), ['ok']);
  } finally {
    await accepting.close();
  }

  // The client cancels the call while the person is asked, after the budget was spent.
  const second = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
  const spareToo = await openSession(server, second.token, 'forge');
  let asked!: () => void;
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  const cancelling = await connect(server, {
    product: 'forge', tenant: 'acme', scopes: [], token: second.token,
    elicit: async () => {
      await spendBudget(server, second.token, spareToo);
      asked();
      return new Promise(() => undefined); // the person never answers
    },
  });
  try {
    const victim = await target();
    const controller = new AbortController();
    const call = cancelling.client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: victim.id } }, undefined, { signal: controller.signal }).catch((e) => e);
    await wasAsked;
    const cancelledAt = Date.now();
    controller.abort('the person changed their mind');
    await call;
    const records = () => auditOf(server, 'acme', { connection_id: second.connection.id, name: 'forge.delete_conversation' });
    while ((await records()).length === 0 && Date.now() - cancelledAt < 15_000) await new Promise((resolve) => setTimeout(resolve, 100));
    t.true(Date.now() - cancelledAt < 10_000, 'the cancellation reached the server: the call ended long before CONFIRMATION_TIMEOUT_MS');
    t.deepEqual((await records()).map((r) => r.outcome), ['timeout']);
    t.truthy(await server.db('forge_conversations').where({ id: victim.id }).first(), 'nothing was deleted');
  } finally {
    await cancelling.close();
  }
}, { env: { RATE_LIMIT_PER_MINUTE: '8', CONFIRMATION_TIMEOUT_MS: '20000' } });
