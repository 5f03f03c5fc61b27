/**
 * A destructive call that asks the person (form elicitation) and is then cancelled by its client,
 * or never answered: the call ends as `timeout` ("nothing was changed"), audited once, and the
 * server's own elicitation request is withdrawn at the client (MCP cancellation: the receiver
 * SHOULD stop processing the cancelled request and free what it holds). Its reply, `timeout`,
 * ends the call's own stream, as for the calls the host answers itself.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { auditOf, grant, MCP_HEADERS, mcpTest, rawPost, type McpTestServer } from '../helpers/mcp.js';
import { within } from '../helpers/poll.js';

const SCOPES = ['forge.chat.read', 'forge.chat.write'];

/** An SDK client declaring form elicitation whose person never answers (the dialog stays open until the server withdraws it). */
async function silentPerson(server: McpTestServer) {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: SCOPES });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.mcpUrl}/forge`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'review', version: '1' }, { capabilities: { elicitation: { form: {} } } });
  let asked!: () => void;
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  let elicitationId: string | number | undefined;
  client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
    elicitationId = extra.requestId;
    asked();
    return new Promise<ElicitResult>((resolve) => extra.signal.addEventListener('abort', () => resolve({ action: 'cancel' })));
  });
  await client.connect(transport);
  // What reaches the client, read off the wire: the SDK client itself ignores a cancellation of
  // request id 0 (its _oncancel tests the id for truthiness), and 0 is the server's first request id.
  const received: any[] = [];
  const deliver = transport.onmessage!;
  transport.onmessage = (message: JSONRPCMessage) => {
    received.push(message);
    deliver(message);
  };
  const withdrawn = () => elicitationId !== undefined && received.some((m) => m.method === 'notifications/cancelled' && m.params?.requestId === elicitationId);
  const target = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).first('id');
  return { client, connection, target, wasAsked, withdrawn };
}

async function until(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return condition();
}

mcpTest('a call cancelled while its elicitation waits ends at once as timeout, and the elicitation is withdrawn at the client', async (t, server) => {
  const { client, connection, target, wasAsked, withdrawn } = await silentPerson(server);
  try {
    const controller = new AbortController();
    const call = client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id } }, undefined, { signal: controller.signal }).catch((e) => e);
    await wasAsked;
    controller.abort('the person changed their mind');
    await call;
    const records = () => auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.delete_conversation' });
    t.true(await until(async () => (await records()).length > 0, 5_000), 'the cancelled call ends (and is audited) within seconds, not after the SDK’s 60 s request time-out');
    t.deepEqual((await records()).map((r) => r.outcome), ['timeout'], 'a cancelled call is audited as timeout ("nothing was changed"), not internal');
    t.true(await until(async () => withdrawn(), 2_000), 'the server cancels its elicitation/create at the client');
    t.truthy(await server.db('forge_conversations').where({ id: target.id }).first(), 'nothing was deleted');
  } finally {
    await client.close();
  }
});

/** How long the person has to answer in the next test (CONFIRMATION_TIMEOUT_MS; 50 s by default). */
const ANSWER_WITHIN_MS = 2_000;

mcpTest('an elicitation the person leaves unanswered for CONFIRMATION_TIMEOUT_MS ends the call as timeout with “nothing was changed”, not as an internal error', async (t, server) => {
  const { client, connection, target } = await silentPerson(server);
  try {
    const asked = performance.now();
    const result = await client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id } }, undefined, { timeout: 30_000 }).then(
      (value) => ({ value, error: undefined as any }), (error) => ({ value: undefined, error }));
    t.true(performance.now() - asked >= ANSWER_WITHIN_MS, 'the person had the configured time to answer');
    t.is(result.error?.data?.code, 'timeout', `answer: ${JSON.stringify(result.value ?? { code: result.error?.code, message: result.error?.message, data: result.error?.data })}`);
    t.regex(result.error?.message ?? '', /did not answer the confirmation in time; nothing was changed/);
    t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.delete_conversation' })).map((r) => r.outcome), ['timeout']);
    t.truthy(await server.db('forge_conversations').where({ id: target.id }).first(), 'nothing was deleted');
  } finally {
    await client.close();
  }
}, { env: { CONFIRMATION_TIMEOUT_MS: String(ANSWER_WITHIN_MS) } });

mcpTest('a session deleted while a call’s elicitation waits ends that call as timeout, audited once (as for calls without elicitation)', async (t, server) => {
  const { client, connection, target, wasAsked } = await silentPerson(server);
  try {
    const call = client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id } }).catch((e) => e);
    await wasAsked;
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    const records = () => auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.delete_conversation' });
    t.true(await until(async () => (await records()).length > 0, 5_000), 'the call ends with its session');
    t.deepEqual((await records()).map((r) => r.outcome), ['timeout']);
    t.truthy(await server.db('forge_conversations').where({ id: target.id }).first(), 'nothing was deleted');
    void call;
  } finally {
    await client.close();
  }
});

mcpTest('a call cancelled while its elicitation waits gets its timeout reply on its own stream, which then ends, and its id is free again', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: SCOPES });
  const post = (body: unknown, sessionId?: string) => rawPost(server, 'forge', { token, sessionId, body: JSON.stringify(body) }, (body as { id?: unknown }).id);
  const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'raw', version: '1' } } });
  const sessionId = init.sessionId!;
  t.is((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).status, 202);
  const target = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).first('id');

  const response = await fetch(`${server.mcpUrl}/forge`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'forge.delete_conversation', arguments: { conversation_id: target.id } } }),
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const readUntil = async (done: (text: string, ended: boolean) => boolean) => {
    for (;;) {
      const chunk = await reader.read();
      if (!chunk.done) text += chunk.value;
      if (done(text, chunk.done) || chunk.done) return chunk.done;
    }
  };
  t.false(await within(5_000, readUntil((sofar) => sofar.includes('"elicitation/create"'))) ?? true, 'the person is asked on the call’s stream');

  t.is((await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'changed my mind' } }, sessionId)).status, 202);
  const ended = await within(5_000, readUntil((_, end) => end));
  t.true(ended, `the call’s stream ends: ${text.slice(-400)}`);
  const replies = text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6))).filter((m) => m.id === 7);
  t.deepEqual(replies.map((m) => m.error?.data?.code), ['timeout'], text.slice(-400));
  t.is((await post({ jsonrpc: '2.0', id: 7, method: 'ping' }, sessionId)).status, 200, 'the id is free again');
  t.truthy(await server.db('forge_conversations').where({ id: target.id }).first(), 'nothing was deleted');
});
