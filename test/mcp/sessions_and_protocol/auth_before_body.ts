/**
 * The bearer token is checked before the body of a POST is read: a caller without a valid token
 * gets 401 with the challenge (MCP authorization: `WWW-Authenticate` naming the resource metadata)
 * whatever it sends, and cannot make the server read or parse a body up to BODY_LIMIT_BYTES. With a
 * valid token, a bad body still gets its own error.
 */
import type { ExecutionContext } from 'ava';
import { auditOf, grant, MCP_HEADERS, mcpTest, openSession, rawPost, readRaw, type McpTestServer, type RawResponse } from '../../helpers/mcp.js';

function assertChallenged(t: ExecutionContext, server: McpTestServer, response: RawResponse, label: string, error?: string): void {
  t.is(response.status, 401, `${label}: ${response.text.slice(0, 200)}`);
  t.is(response.body?.error?.code, -32010, label);
  t.is(response.body?.error?.data?.code, 'invalid_token', label);
  const challenge = response.headers.get('www-authenticate') ?? '';
  t.true(challenge.includes(`resource_metadata="${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/forge"`), `${label}: ${challenge}`);
  t.regex(challenge, error ? new RegExp(`error="${error}"`) : /^Bearer resource_metadata=/, label);
}

/** A POST whose body starts and never ends: only a server that answers without reading it answers at all. */
async function endlessPost(server: McpTestServer, headers: Record<string, string>): Promise<RawResponse | 'no answer'> {
  const controller = new AbortController();
  const encoder = new TextEncoder();
  try {
    const answer = fetch(`${server.mcpUrl}/forge`, {
      method: 'POST', duplex: 'half', signal: controller.signal,
      headers: { ...MCP_HEADERS, ...headers },
      body: new ReadableStream({ start(stream) { stream.enqueue(encoder.encode('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"')); } }),
    } as RequestInit).then(readRaw);
    answer.catch(() => undefined);
    return await Promise.race([answer, new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), 5_000))]);
  } finally {
    controller.abort();
  }
}

mcpTest('without a valid token a POST gets 401 with the challenge before its body is read: huge, endless, malformed or of the wrong type', async (t, server) => {
  const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(server.config.bodyLimitBytes) } });
  const bodies: Array<[string, string, Record<string, string>?]> = [
    ['a body over BODY_LIMIT_BYTES', huge],
    ['malformed JSON', '{"jsonrpc":"2.0","id":1,"method":'],
    ['a batch', JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }])],
    ['not JSON-RPC', '{"hello":"world"}'],
    ['the wrong content type', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { 'content-type': 'text/plain' }],
  ];
  for (const [label, body, headers] of bodies) {
    assertChallenged(t, server, await rawPost(server, 'forge', { body, headers }), `no token, ${label}`);
    assertChallenged(t, server, await rawPost(server, 'forge', { token: 'not-a-token-anyone-was-issued', body, headers }), `an unknown token, ${label}`, 'invalid_token');
  }
  for (const [label, headers, error] of [['no token', {}, undefined], ['an unknown token', { authorization: 'Bearer not-a-token-anyone-was-issued' }, 'invalid_token']] as const) {
    const endless = await endlessPost(server, headers);
    if (endless === 'no answer') {
      t.fail(`${label}: the server waited for a body that never ends instead of answering 401`);
      continue;
    }
    assertChallenged(t, server, endless, `${label}, an endless body`, error);
  }
});

mcpTest('a refused token that belongs to a connection: its call is audited from the body read after the token check; a body that cannot be read is not', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'aegis', tenant: 'acme', scopes: ['aegis.scans.read'] });
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: {} } };
  assertChallenged(t, server, await rawPost(server, 'forge', { token, body: JSON.stringify(call) }), 'a well-formed call', 'invalid_token');
  assertChallenged(t, server, await rawPost(server, 'forge', { token, body: '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":' }), 'malformed JSON', 'invalid_token');
  const huge = JSON.stringify({ ...call, params: { ...call.params, arguments: { pad: 'x'.repeat(server.config.bodyLimitBytes) } } });
  assertChallenged(t, server, await rawPost(server, 'forge', { token, body: huge }), 'a body over BODY_LIMIT_BYTES', 'invalid_token');
  const records = await auditOf(server, 'acme', { connection_id: connection.id });
  t.deepEqual(records.map((r) => [r.product, r.name, r.outcome]), [['forge', 'forge.list_conversations', 'invalid_token']]);
});

mcpTest('with a valid token, a bad body still gets its own error: parse error, 413, 415, batch', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const malformed = await rawPost(server, 'forge', { token, sessionId, body: '{"jsonrpc":"2.0","id":1,"method":' });
  t.is(malformed.status, 400);
  t.is(malformed.body.error.code, -32700);
  t.is(malformed.body.error.data.code, 'invalid_json');
  const huge = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(server.config.bodyLimitBytes) } }) });
  t.is(huge.status, 413);
  t.is(huge.body.error.data.code, 'payload_too_large');
  const wrongType = await rawPost(server, 'forge', { token, sessionId, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers: { 'content-type': 'text/plain' } });
  t.is(wrongType.status, 415);
  const batch = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]) });
  t.is(batch.status, 400);
  t.is(batch.body.error.code, -32600);
});
