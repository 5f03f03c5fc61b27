/**
 * Malformed JSON-RPC at the MCP servers: every refusal is a stable code (DESIGN.md §7), never
 * the schema library's issue dump as -32603, and a client's own failures are not server errors.
 */
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import knex from 'knex';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { tokenLookupSent } from '../helpers/db.js';
import { auditOf, grant, mcpPostgresTest, mcpTest, openSession, rawPost } from '../helpers/mcp.js';
import { until } from '../helpers/poll.js';

const CHAT = ['forge.chat.read'];

mcpTest('params that do not fit their method are invalid params naming the field, never an internal error', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['tools/list', { cursor: 5 }, 'params.cursor'],
    ['tools/list', { cursor: 1e999 }, 'params.cursor'],
    ['resources/list', { cursor: 5 }, 'params.cursor'],
    ['resources/templates/list', { cursor: [] }, 'params.cursor'],
    ['prompts/list', { cursor: {} }, 'params.cursor'],
  ];
  for (const [method, params, field] of cases) {
    const label = `${method} ${JSON.stringify(params)}`;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }).replace('"cursor":null', '"cursor":1e999');
    const response = await rawPost(server, 'forge', { token, sessionId, body }, 7);
    t.is(response.status, 200, label);
    t.is(response.body.id, 7, label);
    t.is(response.body.error?.code, -32602, label);
    t.is(response.body.error.data.code, 'invalid_arguments', label);
    t.is(response.body.error.data.field, field, label);
    t.truthy(response.body.error.data.request_id, label);
    t.regex(response.body.error.message, new RegExp(`^invalid params: ${field.replace(/\./g, '\\.')}: `), label);
    t.false(response.body.error.message.includes('\n'), `${label}: one line, not an issue list`);
  }

  // A tool, resource or prompt named by something other than a string: refused and audited.
  const uri = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'resources/read', params: { uri: 5 } }) }, 8);
  t.is(uri.body.error.code, -32602);
  t.is(uri.body.error.data.field, 'params.uri');
  const call = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: ['forge.list_conversations'] } }) }, 9);
  t.is(call.body.error.code, -32602);
  t.is(call.body.error.data.field, 'params.name');
  t.deepEqual((await auditOf(server, 'acme', { outcome: 'invalid_arguments' })).map((r) => r.kind).sort(), ['resource', 'tool']);

  // A malformed initialize opens no session.
  const init = await rawPost(server, 'forge', { token, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) }, 1);
  t.is(init.body.error.code, -32602);
  t.is(init.body.error.data.field, 'params.protocolVersion');
  t.is(init.sessionId, undefined);
  t.is((await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }) }, 10)).status, 200, 'still serving');
});

mcpTest('a body that is JSON but not a JSON-RPC message is Invalid Request (-32600), not a parse error', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const messages = [
    { jsonrpc: '1.0', id: 1, method: 'ping' },
    { id: 1, method: 'ping' },
    { jsonrpc: '2.0', id: null, method: 'ping' },
    { jsonrpc: '2.0', id: 1.5, method: 'ping' },
    { jsonrpc: '2.0', id: 1, method: 123 },
    { jsonrpc: '2.0', id: 1, method: '' },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: 5 },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: [] },
    { jsonrpc: '2.0', id: 1, method: 'ping', params: null },
    { jsonrpc: '2.0', id: 1 },
    { jsonrpc: '2.0', result: {} },
  ];
  for (const message of messages) {
    const label = JSON.stringify(message);
    const response = await rawPost(server, 'forge', { token, sessionId, body: label });
    t.is(response.status, 400, label);
    t.is(response.body.error?.code, -32600, label);
    t.is(response.body.error.data.code, 'invalid_request', label);
    t.regex(response.body.error.message, /^not a JSON-RPC 2\.0 message: /, label);
    t.regex(response.headers.get('content-type') ?? '', /^application\/json; charset=utf-8/, label);
  }
  // Well-formed messages of each kind still pass.
  t.is((await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'ping' }) }, 'a')).status, 200);
  t.is((await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status, 202);
});

mcpTest('a message the SDK’s strict JSON-RPC schema refuses gets the SDK’s 400 -32700 on the direct path too: nothing is checked, run or audited', async (t, server) => {
  const writer = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
  const reader = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessions = { writer: await openSession(server, writer.token, 'forge'), reader: await openSession(server, reader.token, 'forge') };
  const tokens = { writer: writer.token, reader: reader.token };
  const conversations = async () => Number((await server.db('forge_conversations').count({ n: '*' }).first())?.n);
  const before = await conversations();
  const create = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forge.create_conversation', arguments: { title: 'strict' } } };
  const cases: Array<[string, 'writer' | 'reader', Record<string, unknown>]> = [
    ['a write call with another member', 'writer', { ...create, extra: true }],
    ['a write call that also carries an error', 'writer', { ...create, error: { code: 1, message: 'x' } }],
    ['a write call that also carries a result', 'writer', { ...create, result: {} }],
    ['a write call whose _meta is a string', 'writer', { ...create, params: { ...create.params, _meta: 'a string' } }],
    ['an unknown tool with another member', 'writer', { ...create, params: { name: 'forge.nope', arguments: {} }, extra: true }],
    ['a write call without its scope, with another member', 'reader', { ...create, extra: true }],
    ['a tool name that is not a string, with another member', 'reader', { ...create, params: { name: 5 }, extra: true }],
    ['tools/list with another member', 'reader', { jsonrpc: '2.0', id: 2, method: 'tools/list', extra: true }],
    ['tools/list whose _meta is a string', 'reader', { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: 'a string' } }],
    ['ping whose progress token is an object', 'reader', { jsonrpc: '2.0', id: 3, method: 'ping', params: { _meta: { progressToken: { not: 'a primitive' } } } }],
    ['resources/read with another member', 'reader', { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'portico://forge/conversations/x' }, extra: 1 }],
    ['prompts/get with another member', 'reader', { jsonrpc: '2.0', id: 5, method: 'prompts/get', params: { name: 'forge.summarize_conversation', arguments: {} }, extra: 1 }],
    ['a method the SDK answers itself, whose _meta is a string', 'reader', { jsonrpc: '2.0', id: 6, method: 'logging/setLevel', params: { level: 'info', _meta: 'a string' } }],
  ];
  // The SDK's transport answers a method it serves itself so; only the request id differs from call to call.
  const sdk = await rawPost(server, 'forge', { token: reader.token, sessionId: sessions.reader, body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'logging/setLevel', params: { level: 'info' }, extra: true }) });
  t.is(sdk.status, 400);
  t.deepEqual(sdk.body, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message', data: { code: 'invalid_request', request_id: sdk.headers.get('x-request-id') } }, id: null });
  for (const [label, who, message] of cases) {
    const response = await rawPost(server, 'forge', { token: tokens[who], sessionId: sessions[who], body: JSON.stringify(message) });
    t.is(response.status, 400, `${label}: ${response.text.slice(0, 300)}`);
    t.is(response.headers.get('content-type'), sdk.headers.get('content-type'), label);
    t.is(response.text, sdk.text.replace(sdk.headers.get('x-request-id')!, response.headers.get('x-request-id')!), label);
  }
  t.is(await conversations(), before, 'nothing was created');
  for (const { connection } of [writer, reader]) t.deepEqual(await auditOf(server, 'acme', { connection_id: connection.id }), [], 'nothing was audited');
  // The same call without the extra member runs, once.
  const ran = await rawPost(server, 'forge', { token: writer.token, sessionId: sessions.writer, body: JSON.stringify(create) }, 1);
  t.falsy(ran.body.result?.isError, ran.text.slice(0, 300));
  t.deepEqual((await auditOf(server, 'acme', { connection_id: writer.connection.id })).map((r) => r.outcome), ['ok']);
});

mcpTest('a client that goes away in the middle of its body is a 400 in the log and the metrics, not a server error', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const { port } = new URL(server.url);
  const send = (path: string, requestId: string, head: string[], body: string) => new Promise<void>((resolve, reject) => {
    // The client goes away once the server has its request, in the middle of its body.
    const arrived = (request: IncomingMessage) => {
      if (request.headers['x-request-id'] === requestId) socket.destroy();
    };
    server.portico.server.on('request', arrived);
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write([`POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `X-Request-Id: ${requestId}`, ...head, '', body].join('\r\n'));
    });
    socket.on('close', () => {
      server.portico.server.off('request', arrived);
      resolve();
    });
    socket.on('error', reject);
  });
  const mcpHead = ['Content-Type: application/json', 'Accept: application/json, text/event-stream', `Authorization: Bearer ${token}`];
  await send('/mcp/forge', 'probe-abort-0001', [...mcpHead, 'Content-Length: 100'], '{"json');
  await send('/mcp/forge', 'probe-chunk-0001', [...mcpHead, 'Transfer-Encoding: chunked'], 'zz\r\nnot a chunk\r\n');
  await send('/api/mcp/login', 'probe-abort-0002', ['Content-Type: application/x-www-form-urlencoded', 'Content-Length: 100'], 'email=a');
  const probes = ['probe-abort-0001', 'probe-chunk-0001', 'probe-abort-0002'];
  const logLines = () => server.logs.map((line) => JSON.parse(line) as { level: string; msg: string; request_id?: string; status?: number });
  // Each request's line is written once the server is done with it.
  const logged = (id: string) => logLines().find((line) => line.msg === 'request' && line.request_id === id);
  t.true(await until(10_000, async () => probes.every(logged) || undefined), `not every probe's request was logged: ${server.logs.join('\n').slice(-2_000)}`);
  const lines = logLines();
  for (const id of probes) {
    t.is(logged(id)?.status, 400, id);
    const mine = lines.filter((line) => line.request_id === id);
    t.deepEqual(mine.filter((line) => line.level === 'error'), [], `${id}: no error-level line`);
    t.true(mine.every((line) => line.status === undefined || line.status < 500), `${id}: ${JSON.stringify(mine)}`);
  }
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  t.false(/portico_http_request[^\n]*status="5\d\d"/.test(metrics), 'no 5xx counted');
  t.is((await fetch(`${server.url}/healthz`)).status, 200);
});

mcpPostgresTest('a client that goes away while its token is being checked, before its body is read, is a 400 in the log too', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const requestId = 'probe-gone-before-body';
  // The token check (a fresh token: not cached) answers slowly: a lock, a busy database.
  const locker = knex({ client: 'pg', connection: server.database.url });
  const trx = await locker.transaction();
  try {
    await trx.raw('lock table oidc_payloads in access exclusive mode');
    const checking = tokenLookupSent(server.db);
    // The server sees the request end (its client gone) while the check still waits.
    const ended = new Promise<void>((resolve) => {
      const arrived = (request: IncomingMessage) => {
        if (request.headers['x-request-id'] !== requestId) return;
        server.portico.server.off('request', arrived);
        request.once('close', resolve);
      };
      server.portico.server.on('request', arrived);
    });
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write([`POST /mcp/forge HTTP/1.1`, `Host: 127.0.0.1:${port}`, `X-Request-Id: ${requestId}`, 'Content-Type: application/json',
        'Accept: application/json, text/event-stream', `Authorization: Bearer ${token}`, 'Content-Length: 100', '', '{"json'].join('\r\n'));
    });
    socket.on('error', () => undefined);
    await checking;
    socket.destroy();
    await ended;
    await trx.commit();
    const logged = await until(10_000, async () => server.logs.map((line) => JSON.parse(line) as { msg: string; request_id?: string; status?: number })
      .find((line) => line.msg === 'request' && line.request_id === requestId));
    t.is(logged?.status, 400, 'the request was never answered: its body was waited for after its client had gone');
  } finally {
    await trx.rollback().catch(() => undefined);
    await locker.destroy();
  }
});

mcpTest('over its rate limit a connection may still close its session, and the first refused call of the window is audited', async (t, server) => {
  const limit = server.config.rateLimitPerMinute;
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge'); // two requests
  const call = (id: number) => rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: {} } }) }, id);
  for (let i = 2; i < limit; i++) t.is((await call(i)).status, 200);
  for (let i = 0; i < 4; i++) t.is((await call(100 + i)).status, 429);
  const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.list_conversations' });
  t.deepEqual(records.map((r) => r.outcome), [...Array(limit - 2).fill('ok'), 'rate_limited']);

  const closed = await fetch(`${server.mcpUrl}/forge`, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } });
  t.is(closed.status, 200);
  const after = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) }, 1);
  t.is(after.status, 429, 'everything else is still limited');
}, { env: { RATE_LIMIT_PER_MINUTE: '8' } });
