/**
 * The trust contract of SPEC.md part 1.4 / DESIGN.md §6, call by call, on every database:
 * scope, tenant, confirmation, arguments, audience, and exactly one audit record per call.
 */
import type { ExecutionContext } from 'ava';
import { dialectOf } from '../../db/connect.js';
import { auditOf, connect, grant, mcpTest, openSession, rawCall, type McpTestServer, type RawResponse } from '../helpers/mcp.js';

const ALL_FORGE = ['forge.chat.read', 'forge.chat.write', 'forge.content.read', 'forge.content.write', 'forge.documents.read', 'forge.documents.write'];

/**
 * The tenant's demo conversation that has messages. The demo creates its two conversations in
 * the same instant, so their created_at alone does not say which one comes first.
 */
async function conversationOf(server: McpTestServer, tenant: 'acme' | 'globex'): Promise<{ id: string; title: string }> {
  return server.db('forge_conversations').where({ tenant_id: server.tenants[tenant].id })
    .whereExists((messages) => messages.select(1).from('forge_messages').whereRaw('forge_messages.conversation_id = forge_conversations.id'))
    .orderBy([{ column: 'created_at' }, { column: 'id' }]).first('id', 'title');
}

async function countRows(server: McpTestServer, table: string, where: Record<string, unknown>): Promise<number> {
  const row = await server.db(table).where(where).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** The records of one connection for one name: a call must leave exactly one. */
async function recordsOf(server: McpTestServer, tenant: 'acme' | 'globex', connectionId: string, name: string) {
  return auditOf(server, tenant, { connection_id: connectionId, name });
}

function toolCall(name: string, args: unknown): { name: string; arguments: Record<string, unknown> } {
  // Raw calls deliberately send malformed arguments too; the wire does not care about TypeScript.
  return { name, arguments: args as Record<string, unknown> };
}

function assertJsonRpcError(t: ExecutionContext, response: RawResponse, status: number, rpcCode: number, code: string) {
  t.is(response.status, status, response.text);
  t.is(response.body.jsonrpc, '2.0');
  t.is(response.body.error.code, rpcCode);
  t.is(response.body.error.data.code, code);
  t.regex(response.body.error.data.request_id, /^[A-Za-z0-9._-]+$/);
  t.is(response.body.result, undefined);
}

mcpTest('a read-only grant calling a write tool gets HTTP 403 insufficient_scope naming the scope, and nothing is written', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const before = await countRows(server, 'forge_conversations', { tenant_id: server.tenants.acme.id });
  const response = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.create_conversation', { title: 'Should not exist' }));
  assertJsonRpcError(t, response, 403, -32003, 'insufficient_scope');
  const challenge = response.headers.get('www-authenticate') ?? '';
  t.regex(challenge, /^Bearer /);
  t.regex(challenge, /error="insufficient_scope"/);
  t.regex(challenge, /scope="forge\.chat\.write"/);
  t.true(challenge.includes(`resource_metadata="${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/forge"`));
  t.is(await countRows(server, 'forge_conversations', { tenant_id: server.tenants.acme.id }), before);
  const records = await recordsOf(server, 'acme', connection.id, 'forge.create_conversation');
  t.deepEqual(records.map((r) => [r.kind, r.outcome, r.product, r.user_id]), [['tool', 'insufficient_scope', 'forge', server.users['admin@acme.example']]]);
});

mcpTest('a resource read naming a long unknown collection is not_found and recorded, on both databases', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ALL_FORGE });
  const collection = 'a'.repeat(250);
  const response = await rawCall(server, token, 'forge', 'resources/read', { uri: `portico://forge/${collection}/1` });
  t.is(response.status, 200, response.text);
  t.is(response.body?.error?.code, -32002);
  t.is(response.body?.error?.data?.code, 'not_found');
  const records = await auditOf(server, 'acme', { connection_id: connection.id, kind: 'resource' });
  t.deepEqual(records.map((r) => r.outcome), ['not_found']);
  t.is(records[0].name, `forge.${collection}`.slice(0, 200));
});

mcpTest('a resource URI is read with its scheme and product in any case, and its path exactly', async (t, server) => {
  const own = await conversationOf(server, 'acme');
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ALL_FORGE });
  const read = (uri: string) => rawCall(server, token, 'forge', 'resources/read', { uri });

  // RFC 3986 §6.2.2.1: the scheme and the host compare without case.
  const shouted = `PORTICO://FORGE/conversations/${own.id}`;
  const response = await read(shouted);
  t.is(response.status, 200, response.text);
  t.is(response.body?.result?.contents?.[0]?.uri, shouted, 'the URI is answered as it was asked');
  t.true(response.body?.result?.contents?.[0]?.text?.includes(own.title), response.text.slice(0, 300));

  // The path is not folded: another collection is not found.
  assertJsonRpcError(t, await read(`portico://forge/Conversations/${own.id}`), 200, -32002, 'not_found');
  // Folding picks no other product: this is still the forge server.
  assertJsonRpcError(t, await read(`PORTICO://AEGIS/conversations/${own.id}`), 200, -32002, 'not_found');

  t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id, kind: 'resource' })).map((r) => `${r.name} ${r.outcome}`).sort(), [
    'forge.conversations not_found',
    'forge.conversations ok',
    'forge.resource not_found',
  ]);
});

mcpTest('an acme user naming a globex conversation gets HTTP 403 forbidden_cross_tenant and nothing of it', async (t, server) => {
  const foreign = await conversationOf(server, 'globex');
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ALL_FORGE });
  const messagesBefore = await countRows(server, 'forge_messages', { conversation_id: foreign.id });

  // id forms a model might send: as is, upper case, padded, percent-encoded
  const forms = [foreign.id, foreign.id.toUpperCase(), ` ${foreign.id} `, encodeURIComponent(foreign.id).replace(/-/g, '%2D')];
  for (const id of forms) {
    const read = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.get_conversation', { conversation_id: id }));
    assertJsonRpcError(t, read, 403, -32003, 'forbidden_cross_tenant');
    t.false(read.text.includes(foreign.title), 'no data of the foreign record is echoed');
  }
  const write = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.add_message', { conversation_id: foreign.id, content: 'intrusion' }));
  assertJsonRpcError(t, write, 403, -32003, 'forbidden_cross_tenant');
  const destroy = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.delete_conversation', { conversation_id: foreign.id, confirmed: true }));
  assertJsonRpcError(t, destroy, 403, -32003, 'forbidden_cross_tenant');
  const resource = await rawCall(server, token, 'forge', 'resources/read', { uri: `portico://forge/conversations/${foreign.id}` });
  assertJsonRpcError(t, resource, 403, -32003, 'forbidden_cross_tenant');
  const prompt = await rawCall(server, token, 'forge', 'prompts/get', { name: 'forge.summarize_conversation', arguments: { conversation_id: foreign.id } });
  assertJsonRpcError(t, prompt, 403, -32003, 'forbidden_cross_tenant');
  t.false(prompt.text.includes(foreign.title));

  t.is(await countRows(server, 'forge_messages', { conversation_id: foreign.id }), messagesBefore);
  t.is(await countRows(server, 'forge_conversations', { id: foreign.id }), 1);
  t.is(await countRows(server, 'mcp_confirmations', { connection_id: connection.id }), 0, 'no confirmation is offered for a foreign record');
  t.deepEqual((await recordsOf(server, 'acme', connection.id, 'forge.get_conversation')).map((r) => r.outcome), forms.map(() => 'forbidden_cross_tenant'));
  for (const name of ['forge.add_message', 'forge.delete_conversation', 'forge.conversations', 'forge.summarize_conversation']) {
    t.deepEqual((await recordsOf(server, 'acme', connection.id, name)).map((r) => r.outcome), ['forbidden_cross_tenant'], name);
  }
  t.is((await auditOf(server, 'globex', { connection_id: connection.id })).length, 0, 'the refusal is in the caller’s log, not the victim’s');
});

mcpTest('delete without confirmation answers confirmation_required and deletes nothing; confirmed with the same arguments deletes once', async (t, server) => {
  const { client, connection, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
  try {
    const target = await conversationOf(server, 'acme');
    const messages = await countRows(server, 'forge_messages', { conversation_id: target.id });
    t.true(messages > 0);

    const first = await client.callTool(toolCall('forge.delete_conversation', { conversation_id: target.id }));
    t.true(first.isError);
    const pending = first.structuredContent as any;
    t.is(pending.code, 'confirmation_required');
    t.regex(pending.message, /Permanently delete the conversation/);
    t.true(pending.will_destroy.includes(target.id));
    t.deepEqual(pending.confirm_with, { tool: 'forge.delete_conversation', arguments: { conversation_id: target.id, confirmed: true } });
    t.is(await countRows(server, 'forge_conversations', { id: target.id }), 1);

    const confirmed = await client.callTool(toolCall('forge.delete_conversation', { conversation_id: target.id, confirmed: true }));
    t.falsy(confirmed.isError, JSON.stringify(confirmed));
    t.deepEqual(confirmed.structuredContent, { id: target.id, title: target.title, deleted: true, messages_deleted: messages });
    t.is(await countRows(server, 'forge_conversations', { id: target.id }), 0);
    t.is(await countRows(server, 'forge_messages', { conversation_id: target.id }), 0);

    // The confirmation was single use: replaying the confirmed call runs nothing (the record is gone).
    const replay = await client.callTool(toolCall('forge.delete_conversation', { conversation_id: target.id, confirmed: true }));
    t.is((replay.structuredContent as any).code, 'not_found');
    t.deepEqual((await recordsOf(server, 'acme', connection.id, 'forge.delete_conversation')).map((r) => r.outcome), ['confirmation_required', 'ok', 'not_found']);
  } finally {
    await close();
  }
});

mcpTest('confirmed: true on a first call, with other arguments, from another connection or after expiry is a first call again', async (t, server) => {
  const scopes = ['forge.chat.read', 'forge.chat.write'];
  const { client, connection, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes });
  const other = await connect(server, { product: 'forge', tenant: 'acme', scopes });
  try {
    const [a, b] = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).orderBy('created_at').select('id');
    const del = (c: typeof client, id: string, confirmed?: boolean) =>
      c.callTool(toolCall('forge.delete_conversation', confirmed === undefined ? { conversation_id: id } : { conversation_id: id, confirmed }));

    t.is(((await del(client, a.id, true)).structuredContent as any).code, 'confirmation_required', 'confirmed on a first call');
    t.is(((await del(client, b.id, true)).structuredContent as any).code, 'confirmation_required', 'other arguments');
    t.is(((await del(client, a.id, false)).structuredContent as any).code, 'confirmation_required', 'confirmed: false never confirms');
    t.is(((await del(other.client, a.id, true)).structuredContent as any).code, 'confirmation_required', 'another connection');
    await server.db('mcp_confirmations').where({ connection_id: connection.id }).update({ expires_at: Date.now() - 1 });
    t.is(((await del(client, a.id, true)).structuredContent as any).code, 'confirmation_required', 'expired');
    t.is(await countRows(server, 'forge_conversations', { id: a.id }), 1);
    t.is(await countRows(server, 'forge_conversations', { id: b.id }), 1);
    t.deepEqual((await recordsOf(server, 'acme', connection.id, 'forge.delete_conversation')).map((r) => r.outcome), Array(4).fill('confirmation_required'));
  } finally {
    await close();
    await other.close();
  }
});

mcpTest('two parallel confirmed calls execute the deletion once', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.write'] });
  const target = await conversationOf(server, 'acme');
  const [s1, s2] = [await openSession(server, token, 'forge'), await openSession(server, token, 'forge')];
  const first = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.delete_conversation', { conversation_id: target.id }), { sessionId: s1 });
  t.is(first.body.result.structuredContent.code, 'confirmation_required');
  const both = await Promise.all([s1, s2].map((sessionId, i) =>
    rawCall(server, token, 'forge', 'tools/call', toolCall('forge.delete_conversation', { conversation_id: target.id, confirmed: true }), { sessionId, id: 10 + i })));
  const outcomes = both.map((r) => (r.body.result.isError ? r.body.result.structuredContent.code : 'ok')).sort();
  t.is(outcomes.filter((o) => o === 'ok').length, 1, JSON.stringify(outcomes));
  t.is(await countRows(server, 'forge_conversations', { id: target.id }), 0);
  const records = await recordsOf(server, 'acme', connection.id, 'forge.delete_conversation');
  t.is(records.filter((r) => r.outcome === 'ok').length, 1);
  t.is(records.length, 3);
});

mcpTest('bad arguments answer invalid_arguments naming the field, and run nothing', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ALL_FORGE });
  const before = await countRows(server, 'forge_conversations', { tenant_id: server.tenants.acme.id });
  const cases: Array<[string, unknown, string]> = [
    ['forge.create_conversation', { title: 42 }, 'title'],
    ['forge.create_conversation', {}, 'title'],
    ['forge.create_conversation', { title: '' }, 'title'],
    ['forge.create_conversation', { title: 'x', tenant_id: server.tenants.globex.id }, 'tenant_id'],
    ['forge.add_message', { conversation_id: 'x', content: 'hi', role: 'system' }, 'role'],
    ['forge.list_conversations', { limit: 1000 }, 'limit'],
    ['forge.create_conversation', 'not an object', '(arguments)'],
  ];
  for (const [name, args, field] of cases) {
    const response = await rawCall(server, token, 'forge', 'tools/call', toolCall(name, args));
    assertJsonRpcError(t, response, 200, -32602, 'invalid_arguments');
    t.is(response.body.error.data.field, field, JSON.stringify(response.body));
    t.true(response.body.error.message.includes(field), response.body.error.message);
  }
  t.is(await countRows(server, 'forge_conversations', { tenant_id: server.tenants.acme.id }), before);
  const records = await auditOf(server, 'acme', { connection_id: connection.id });
  t.deepEqual(records.map((r) => r.outcome), cases.map(() => 'invalid_arguments'));
  t.deepEqual(records.map((r) => r.name), cases.map(([name]) => name));
});

mcpTest('an unknown tool answers unknown_tool, audited once', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ALL_FORGE });
  for (const name of ['forge.drop_database', 'aegis.list_scans', '']) {
    const response = await rawCall(server, token, 'forge', 'tools/call', toolCall(name, {}));
    assertJsonRpcError(t, response, 200, -32602, 'unknown_tool');
  }
  const records = await auditOf(server, 'acme', { connection_id: connection.id });
  t.deepEqual(records.map((r) => [r.name, r.outcome]), [['forge.drop_database', 'unknown_tool'], ['aegis.list_scans', 'unknown_tool'], ['tools/call', 'unknown_tool']]);
});

mcpTest('a token of another product is refused with 401 and audited in its tenant', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'aegis', resource: `${server.mcpUrl}/aegis`, tenant: 'acme', scopes: ['aegis.scans.read', 'forge.chat.read'] });
  const response = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.list_conversations', {}));
  assertJsonRpcError(t, response, 401, -32010, 'invalid_token');
  const challenge = response.headers.get('www-authenticate') ?? '';
  t.regex(challenge, /error="invalid_token"/);
  t.true(challenge.includes(`resource_metadata="${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/forge"`));
  t.regex(challenge, /scope="[^"]*forge\.chat\.read[^"]*"/);
  t.deepEqual((await recordsOf(server, 'acme', connection.id, 'forge.list_conversations')).map((r) => [r.product, r.outcome]), [['forge', 'invalid_token']]);

  // no token at all: 401 without error=, nothing to attribute
  const anonymous = await rawCall(server, undefined, 'forge', 'tools/call', toolCall('forge.list_conversations', {}));
  assertJsonRpcError(t, anonymous, 401, -32010, 'invalid_token');
  t.notRegex(anonymous.headers.get('www-authenticate') ?? '', /error=/);
  // a token in the query string is never read (MCP authorization, "Token Requirements")
  const query = await fetch(`${server.mcpUrl}/forge?access_token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
  t.is(query.status, 401);
});

mcpTest('revocation: the next request is refused and open sessions and streams close at once', async (t, server) => {
  const { client, token, connection, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  try {
    t.true((await client.listTools()).tools.length > 0);
    const sessionId = (await openSession(server, token, 'forge'));
    const stream = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
    t.is(stream.status, 200);
    const reader = stream.body!.getReader();
    const { revokeConnection } = await import('../../db/grant_store.js');
    await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' }));
    await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
    // the stream ends (read resolves done) rather than hanging
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
    }
    const after = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.list_conversations', {}), { sessionId });
    assertJsonRpcError(t, after, 401, -32010, 'connection_revoked');
    t.deepEqual((await recordsOf(server, 'acme', connection.id, 'forge.list_conversations')).map((r) => r.outcome), ['connection_revoked']);
  } finally {
    await close().catch(() => undefined);
  }
});

mcpTest('expiry: an open GET stream closes when its access token expires, and the token is refused after (checklist R5)', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'], ttlSeconds: 5 });
  const sessionId = await openSession(server, token, 'forge');
  const { hashTokenId } = await import('../../db/grant_store.js');
  const expiresAt = Number((await server.db('oidc_payloads').where({ model: 'AccessToken', id: hashTokenId(token) }).first()).expires_at);
  const stream = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  t.is(stream.status, 200);
  const reader = stream.body!.getReader();
  // The stream ends by itself (read resolves done) once the token has expired, not before.
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
  }
  t.true(Date.now() >= expiresAt - 50, `closed ${expiresAt - Date.now()} ms before the token expired`);
  const after = await rawCall(server, token, 'forge', 'tools/call', toolCall('forge.list_conversations', {}), { sessionId });
  assertJsonRpcError(t, after, 401, -32010, 'invalid_token');
  const again = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  t.is(again.status, 401, 'reconnecting with the expired token is refused');
  await again.body?.cancel();
});

/** Makes every insert into audit_log fail, in this test's own database (no mocks). */
async function breakAudit(server: McpTestServer): Promise<void> {
  if (dialectOf(server.db) === 'postgres') {
    await server.db.raw(`create function audit_down() returns trigger language plpgsql as $$ begin raise exception 'audit store unavailable'; end $$`);
    await server.db.raw('create trigger audit_down before insert on audit_log for each row execute function audit_down()');
  } else {
    await server.db.raw(`create trigger audit_down before insert on audit_log begin select raise(abort, 'audit store unavailable'); end`);
  }
}

mcpTest('when the audit record cannot be written the call fails and nothing it did persists', async (t, server) => {
  const scopes = ['forge.chat.read', 'forge.chat.write'];
  const { client, connection, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes });
  try {
    const target = await conversationOf(server, 'acme');
    const pending = await client.callTool(toolCall('forge.delete_conversation', { conversation_id: target.id }));
    t.is((pending.structuredContent as any).code, 'confirmation_required');
    const conversationsBefore = await countRows(server, 'forge_conversations', { tenant_id: server.tenants.acme.id });
    const messagesBefore = await countRows(server, 'forge_messages', { conversation_id: target.id });
    const callsBefore = (await server.db('connections').where({ id: connection.id }).first()).call_count;
    await breakAudit(server);

    const create = await client.callTool(toolCall('forge.create_conversation', { title: 'Unaudited', first_message: 'should vanish' })).catch((e) => e);
    t.is(create.code, -32603);
    t.is(create.data?.code, 'internal');
    t.notRegex(String(create.message), /audit store unavailable/, 'database text never reaches the client');
    const add = await client.callTool(toolCall('forge.add_message', { conversation_id: target.id, content: 'should vanish' })).catch((e) => e);
    t.is(add.data?.code, 'internal');
    const destroy = await client.callTool(toolCall('forge.delete_conversation', { conversation_id: target.id, confirmed: true })).catch((e) => e);
    t.is(destroy.data?.code, 'internal');

    t.is(await countRows(server, 'forge_conversations', { tenant_id: server.tenants.acme.id }), conversationsBefore);
    t.is(await countRows(server, 'forge_conversations', { title: 'Unaudited' }), 0);
    t.is(await countRows(server, 'forge_messages', { conversation_id: target.id }), messagesBefore);
    t.is(await countRows(server, 'mcp_confirmations', { connection_id: connection.id, consumed_at: null }), 1, 'the confirmation was not consumed');
    t.is((await server.db('connections').where({ id: connection.id }).first()).call_count, callsBefore);
    t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => r.outcome), ['confirmation_required']);
    // the server keeps serving
    t.true((await client.listTools()).tools.length > 0);
  } finally {
    await close();
  }
});
