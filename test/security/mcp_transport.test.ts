/**
 * Attacks on the Streamable HTTP transport (checklist I1-I7, R9-R11, E4): DNS rebinding through
 * Origin and Host, someone else's session, batches, bodies that are too big, too deep, malformed
 * or never finish, and a client that calls too often. Every refusal has a stable code, runs
 * nothing, and the server keeps serving.
 */
import net from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { auditOf, blinkSurface, grant, MCP_HEADERS, mcpTest, openSession, rawCall, rawPost, type McpTestServer } from '../helpers/mcp.js';
import { nested, rawExchange, rawHttp, trickle } from './support.js';

const CHAT = ['forge.chat.read', 'forge.chat.write'];
const INIT = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'attacker', version: '1' } };

async function conversations(server: McpTestServer): Promise<number> {
  return Number((await server.db('forge_conversations').count({ n: '*' }).first())?.n);
}

function createCall(id: number | string, title: string) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'forge.create_conversation', arguments: { title } } };
}

mcpTest('DNS rebinding: a foreign Origin or Host is refused with 403 on POST, GET and DELETE; our own pass', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const url = `${server.mcpUrl}/forge`;
  const port = new URL(server.url).port;
  const base = { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const before = await conversations(server);
  const origins = ['http://evil.example', 'null', `http://127.0.0.1.evil.example:${port}`, `http://127.0.0.1:${Number(port) + 1}`, `https://127.0.0.1:${port}`];
  for (const origin of origins) {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const response = await rawHttp(url, { method, headers: { ...base, origin }, body: method === 'POST' ? JSON.stringify(createCall(1, 'rebound')) : undefined });
      t.is(response.status, 403, `${method} Origin ${origin}`);
      t.is(response.json?.error?.data?.code, 'forbidden', `${method} Origin ${origin}`);
    }
  }
  // A page that is same-origin after rebinding sends no Origin on GET, but its Host is the attacker's name.
  for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.nip.io:${port}`, `localhost.evil.example:${port}`]) {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const response = await rawHttp(url, { method, headers: { ...base, host }, body: method === 'POST' ? JSON.stringify(createCall(1, 'rebound')) : undefined });
      t.is(response.status, 403, `${method} Host ${host}`);
      t.is(response.json?.error?.data?.code, 'forbidden', `${method} Host ${host}`);
    }
  }
  t.is(await conversations(server), before, 'nothing ran');
  t.deepEqual(await auditOf(server, 'acme', { connection_id: connection.id }), []);

  // Our own names pass: the public URL's host, loopback, and no Origin at all (a non-browser client).
  const ours: Array<Record<string, string>> = [{ host: `127.0.0.1:${port}` }, { host: `localhost:${port}` }, { host: `127.0.0.1:${port}`, origin: new URL(server.url).origin }];
  for (const headers of ours) {
    const response = await rawHttp(url, { method: 'POST', headers: { ...base, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }) });
    t.is(response.status, 200, JSON.stringify(headers));
  }
});

mcpTest('the public documents under the MCP URL answer only our own names too', async (t, server) => {
  const port = new URL(server.url).port;
  const mcpPath = new URL(server.mcpUrl).pathname;
  const documents = [`${mcpPath}/`, `${mcpPath}/forge/list_tools`, `${mcpPath}/aegis/client_config`, `/.well-known/oauth-protected-resource${mcpPath}/forge`];
  for (const path of documents) {
    const foreign = await rawHttp(`${server.url}${path}`, { method: 'GET', headers: { host: `evil.example:${port}` } });
    t.is(foreign.status, 403, `${path} for a foreign Host`);
    t.is(foreign.json?.error?.code, 'forbidden', path);
    const ours = await rawHttp(`${server.url}${path}`, { method: 'GET', headers: { host: `127.0.0.1:${port}` } });
    t.is(ours.status, 200, `${path} for our own name`);
  }
});

mcpTest('ALLOWED_HOSTS adds the names a proxy forwards', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const response = await rawHttp(`${server.mcpUrl}/forge`, {
    method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, host: 'portico.internal:8080' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT }),
  });
  t.is(response.status, 200);
  const other = await rawHttp(`${server.mcpUrl}/forge`, {
    method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, host: 'elsewhere.internal' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT }),
  });
  t.is(other.status, 403);
}, { env: { ALLOWED_HOSTS: 'portico.internal' } });

mcpTest('the authorization server and the console answer only to Portico’s own names: no metadata or registration URI points elsewhere', async (t, server) => {
  const port = new URL(server.url).port;
  const requests: Array<[string, string, string?]> = [
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/openid-configuration'],
    ['GET', '/oauth/jwks'],
    ['POST', '/oauth/register', JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'] })],
    ['POST', '/oauth/token', 'grant_type=authorization_code&code=x'],
    ['GET', '/oauth/authorize?client_id=x&response_type=code'],
    ['GET', '/api/mcp/login'],
    ['GET', '/api/mcp/v1/connections'],
  ];
  const clients = Number((await server.db('oidc_payloads').where({ model: 'Client' }).count({ n: '*' }).first())?.n ?? 0);
  for (const host of [`evil.example:${port}`, 'evil.example', `localhost.evil.example:${port}`]) {
    for (const [method, path, body] of requests) {
      const response = await rawHttp(`${server.url}${path}`, {
        method, body,
        headers: { host, 'content-type': path === '/oauth/token' ? 'application/x-www-form-urlencoded' : 'application/json' },
      });
      t.is(response.status, 403, `${method} ${path} Host ${host}`);
      t.false(response.text.includes('evil.example'), `${method} ${path} Host ${host}: nothing names the foreign host`);
    }
  }
  t.is(Number((await server.db('oidc_payloads').where({ model: 'Client' }).count({ n: '*' }).first())?.n ?? 0), clients, 'no client was registered');
  // Our own names, and the operational endpoints under any name (probes use the pod's address).
  const metadata = await rawHttp(`${server.url}/.well-known/oauth-authorization-server`, { headers: { host: `localhost:${port}` } });
  t.is(metadata.status, 200);
  t.is(metadata.json.token_endpoint, `http://localhost:${port}/oauth/token`);
  t.is((await rawHttp(`${server.url}/.well-known/oauth-authorization-server`, { headers: { host: `portico.internal:${port}` } })).status, 200, 'ALLOWED_HOSTS');
  t.is((await rawHttp(`${server.url}/healthz`, { headers: { host: '10.1.2.3:8080' } })).status, 200);
  t.is((await rawHttp(`${server.url}/metrics`, { headers: { host: '10.1.2.3:8080' } })).status, 200);
}, { env: { ALLOWED_HOSTS: 'portico.internal' } });

mcpTest('someone else’s session id gets 404 on POST, GET and DELETE, and the owner’s open stream keeps working', async (t, server) => {
  const alice = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const mallory = await grant(server, { product: 'forge', tenant: 'globex', scopes: CHAT });
  const sessionId = await openSession(server, alice.token, 'forge');
  const stream = await fetch(`${server.mcpUrl}/forge`, {
    headers: { authorization: `Bearer ${alice.token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
  });
  t.is(stream.status, 200);
  const reader = stream.body!.getReader();
  try {
    for (let i = 0; i < 3; i++) {
      const post = await rawCall(server, mallory.token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { sessionId });
      t.is(post.status, 404);
      t.is(post.body.error.data.code, 'not_found');
      const get = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${mallory.token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
      t.is(get.status, 404, 'a second GET stream cannot be attached to the victim’s session');
      await get.body?.cancel();
      const del = await fetch(`${server.mcpUrl}/forge`, { method: 'DELETE', headers: { authorization: `Bearer ${mallory.token}`, 'mcp-session-id': sessionId } });
      t.is(del.status, 404);
    }
    // A session id without any token is not a credential either.
    const anonymous = await rawPost(server, 'forge', { sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    t.is(anonymous.status, 401);
    const anonymousGet = await fetch(`${server.mcpUrl}/forge`, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId } });
    t.is(anonymousGet.status, 401);
    await anonymousGet.body?.cancel();

    // The victim's stream is still open and still delivers: a surface change reaches it.
    await blinkSurface(server, 'forge', 'live');
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('notifications/tools/list_changed')) {
      const chunk = await reader.read();
      if (chunk.done) break;
      received += decoder.decode(chunk.value);
    }
    t.true(received.includes('notifications/tools/list_changed'), received);
    t.is((await rawCall(server, alice.token, 'forge', 'tools/list', {}, { sessionId })).status, 200);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
});

mcpTest('a batch of 1,000 calls, a mixed batch and a batch with duplicate ids are refused whole; nothing runs', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: [...CHAT] });
  const sessionId = await openSession(server, token, 'forge');
  const target = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).first('id');
  const before = await conversations(server);
  const batches = [
    Array.from({ length: 1000 }, (_, i) => createCall(i, `batch ${i}`)),
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: {} } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'forge.delete_conversation', arguments: { conversation_id: target.id, confirmed: true } } }],
    [createCall(5, 'dup a'), createCall(5, 'dup b')],
    [],
  ];
  for (const batch of batches) {
    const response = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify(batch) });
    t.is(response.status, 400);
    t.is(response.body.error.code, -32600);
    t.is(response.body.error.data.code, 'invalid_request');
  }
  t.is(await conversations(server), before);
  t.truthy(await server.db('forge_conversations').where({ id: target.id }).first());
  t.deepEqual(await auditOf(server, 'acme', { connection_id: connection.id }), []);
});

mcpTest('malformed JSON-RPC of every kind gets a JSON-RPC error with a stable code, never a 500', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const before = await conversations(server);
  const bodies: Array<[string, string | Buffer, number[]]> = [
    ['truncated', '{"jsonrpc":"2.0","id":1,"method":"tools/li', [400]],
    ['BOM', '\uFEFF{"jsonrpc":"2.0","id":1,"method":"tools/list"}', [400, 200]],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), [400]],
    ['id as an object', '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', [400]],
    ['id as an array', '{"jsonrpc":"2.0","id":[1],"method":"tools/list"}', [400]],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}', [400]],
    ['no jsonrpc', '{"id":1,"method":"tools/list"}', [400]],
    ['method a number', '{"jsonrpc":"2.0","id":1,"method":42}', [400]],
    ['params an array', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["forge.create_conversation"]}', [400, 200]],
    ['params a string', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}', [400, 200]],
    ['duplicate keys', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forge.list_conversations","name":"forge.create_conversation","arguments":{}}}', [200, 400]],
    ['__proto__ in arguments', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forge.create_conversation","arguments":{"title":"p","__proto__":{"admin":true}}}}', [400]],
    ['constructor in arguments', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forge.create_conversation","arguments":{"title":"p","constructor":{"prototype":{"x":1}}}}}', [200]],
    ['a result with no request', '{"jsonrpc":"2.0","id":99,"result":{}}', [202, 400]],
    ['an error with no request', '{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"x"}}', [202, 400]],
    ['a huge number id', `{"jsonrpc":"2.0","id":1${'0'.repeat(400)},"method":"tools/list"}`, [200, 400]],
    ['a huge method name', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x'.repeat(500_000) }), [200, 400]],
  ];
  for (const [label, body, statuses] of bodies) {
    const response = await rawPost(server, 'forge', { token, sessionId, body: body as string });
    t.true(statuses.includes(response.status), `${label}: ${response.status} ${response.text.slice(0, 300)}`);
    if (response.status >= 400) t.truthy(response.body?.error?.data?.code, `${label}: ${response.text.slice(0, 300)}`);
    if (response.status === 200) t.truthy(response.body?.error ?? response.body?.result, label);
    if (response.body?.result?.structuredContent) t.fail(`${label} ran a tool: ${response.text.slice(0, 300)}`);
  }
  // __proto__ is refused before anything copies the message; constructor by the strict schema, by name.
  const proto = await rawPost(server, 'forge', { token, sessionId, body: bodies[11][1] as string }, 1);
  t.is(proto.body.error.data.code, 'invalid_request');
  const ctor = await rawPost(server, 'forge', { token, sessionId, body: bodies[12][1] as string }, 1);
  t.is(ctor.body.error.data.code, 'invalid_arguments');
  t.is(ctor.body.error.data.field, 'constructor');
  t.is(({} as any).admin, undefined, 'no prototype was polluted');

  for (const method of ['tools/destroy', 'rpc.discover', '__proto__', 'constructor', 'tools/call ', 'TOOLS/CALL', 'sampling/createMessage', 'x'.repeat(2000)]) {
    const response = await rawCall(server, token, 'forge', method, {}, { sessionId });
    t.is(response.status, 200, method.slice(0, 40));
    t.is(response.body.error.code, -32601, method.slice(0, 40));
  }
  const gzip = await rawPost(server, 'forge', { token, sessionId, body: 'H4sIAAAAAAAAA6uuBQBDv6ajAgAAAA==', headers: { 'content-encoding': 'gzip' } });
  t.is(gzip.status, 415, 'compressed bodies are not inflated');
  t.is(gzip.body.error.data.code, 'unsupported_media_type');
  const badVersion = await rawPost(server, 'forge', { token, sessionId, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers: { 'mcp-protocol-version': '1999-01-01' } });
  t.is(badVersion.status, 400, 'an unsupported MCP-Protocol-Version');

  t.is(await conversations(server), before, 'nothing was created');
  t.false((await auditOf(server, 'acme', { connection_id: connection.id })).some((r) => r.outcome === 'ok'), 'no call succeeded');
  t.is((await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId })).status, 200, 'still serving');
});

mcpTest('deeply nested JSON and huge arguments get a clear error without a stack overflow', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const before = await conversations(server);
  const limit = server.config.bodyLimitBytes;
  const deep = [
    ['arguments nested as arrays', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forge.create_conversation","arguments":{"title":"deep","extra":${nested(100_000, 'array')}}}}`],
    ['arguments nested as objects', `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forge.create_conversation","arguments":{"title":"deep","extra":${nested(50_000, 'object')}}}}`],
    ['a nested title', `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forge.create_conversation","arguments":{"title":${nested(100_000, 'array')}}}}`],
    ['nested params', `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":${nested(100_000, 'array')}}}`],
    ['a nested id', `{"jsonrpc":"2.0","id":${nested(100_000, 'array')},"method":"tools/list"}`],
    ['nested resource read', `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":${nested(100_000, 'array')}}}`],
    ['nested prompt arguments', `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"forge.summarize_conversation","arguments":{"conversation_id":${nested(100_000, 'array')}}}}`],
  ];
  for (const [label, body] of deep) {
    t.true(body.length < limit, label);
    const response = await rawPost(server, 'forge', { token, sessionId, body });
    t.true([200, 400].includes(response.status), `${label}: ${response.status} ${response.text.slice(0, 300)}`);
    t.truthy(response.body?.error, `${label}: ${response.text.slice(0, 300)}`);
    t.not(response.body?.error?.data?.code, 'internal', `${label}: ${response.text.slice(0, 300)}`);
  }
  const huge = [
    ['a title near the body limit', { title: 'x'.repeat(limit - 1000) }],
    ['a first message near the body limit', { title: 'ok', first_message: 'y'.repeat(limit - 1000) }],
    ['a huge number', { title: 'n', extra: 1e308 }],
    ['many keys', Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))],
  ] as const;
  for (const [label, args] of huge) {
    const response = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'forge.create_conversation', arguments: args } }) }, 9);
    t.is(response.status, 200, label);
    t.not(response.body?.error?.data?.code, 'internal', `${label}: ${response.text.slice(0, 300)}`);
    const records = await auditOf(server, 'acme', { connection_id: connection.id });
    t.true(records.at(-1)!.args_redacted!.length < 20_000, `${label}: the audit record keeps a bounded excerpt`);
  }
  const created = (await conversations(server)) - before;
  const ok = (await auditOf(server, 'acme', { connection_id: connection.id, outcome: 'ok' })).length;
  t.is(created, ok, 'every conversation that exists was audited as ok');
  t.is((await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId })).status, 200, 'still serving');
});

mcpTest('a body over the limit is refused with 413 whether declared or streamed; the server keeps serving', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const big = JSON.stringify(createCall(1, 'z'.repeat(server.config.bodyLimitBytes + 10)));
  const streamed = await fetch(`${server.mcpUrl}/forge`, {
    method: 'POST', duplex: 'half',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    body: new ReadableStream({ start(controller) { controller.enqueue(new TextEncoder().encode(big)); controller.close(); } }),
  } as RequestInit);
  t.is(streamed.status, 413);
  t.is(((await streamed.json()) as any).error.data.code, 'payload_too_large');
  const lying = await rawHttp(`${server.mcpUrl}/forge`, {
    method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'content-length': String(50 * 1024 * 1024) }, body: '{}',
  }).catch((error: Error) => ({ status: 0, text: error.message }));
  t.true([0, 413].includes(lying.status), `a declared 50 MB body: ${lying.status}`);
  t.is((await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId })).status, 200);
});

mcpTest('a compressed body is refused with 415, not read as malformed JSON; an identity coding is a plain body', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const headers = { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const before = await conversations(server);
  const body = JSON.stringify(createCall(1, 'compressed'));
  for (const [coding, sent] of [['gzip', gzipSync(body)], ['br', brotliCompressSync(body)], ['GZIP, identity', gzipSync(body)], ['x-unknown', Buffer.from(body)]] as const) {
    const response = await rawHttp(`${server.mcpUrl}/forge`, { method: 'POST', headers: { ...headers, 'content-encoding': coding }, body: sent });
    t.is(response.status, 415, coding);
    t.is(response.json?.error?.data?.code, 'unsupported_media_type', coding);
    t.regex(response.json?.error?.message ?? '', /is not supported: send the body uncompressed/, coding);
  }
  t.is(await conversations(server), before, 'nothing ran');
  const plain = await rawHttp(`${server.mcpUrl}/forge`, { method: 'POST', headers: { ...headers, 'content-encoding': 'identity' }, body: JSON.stringify(createCall(2, 'plain')) });
  t.is(plain.status, 200, plain.text);
  t.is(await conversations(server), before + 1);
});

mcpTest('requests the HTTP parser refuses get a status and close: over-long headers a 431 with the error body, garbage a 400; the server keeps serving', async (t, server) => {
  const { host } = new URL(server.url);
  // An authorize URL with an enormous state: over Node's 16 KB limit for the request line and headers.
  const long = await rawExchange(server.url, `GET /oauth/authorize?state=${'s'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  const [head, body] = long.split('\r\n\r\n');
  t.regex(head, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  t.regex(head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/);
  t.regex(head, /\r\nConnection: close$/);
  const error = JSON.parse(body).error;
  t.is(error.code, 'headers_too_large');
  t.regex(error.message, /over the server's limit of 16384 bytes/);
  t.regex(error.request_id, /^[0-9a-f-]{36}$/);
  t.true(server.logs.some((line) => line.includes('request refused by the HTTP parser') && line.includes(error.request_id)), 'logged with its request id');

  t.regex(await rawExchange(server.url, 'NOT HTTP AT ALL\r\n\r\n'), /^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/);

  // On a kept-alive connection, after a complete first exchange: answered too, and closed.
  const target = new URL(server.url);
  const socket = net.connect(Number(target.port), target.hostname);
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('utf8')));
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  while (!/\r\n\r\n[^]*\}/.test(received)) await new Promise((resolve) => setTimeout(resolve, 20));
  socket.write(`GET /healthz?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  await closed;
  t.deepEqual([...received.matchAll(/HTTP\/1\.1 (\d+) /g)].map((m) => m[1]), ['200', '431']);
  t.is((await fetch(`${server.url}/healthz`)).status, 200, 'still serving');
});

mcpTest('a request trickled byte by byte is cut off by the request time-out', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, token, 'forge');
  const { host } = new URL(server.url);
  const body = JSON.stringify(createCall(1, 'slow'.repeat(200)));
  const head = `POST /mcp/forge HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
    `Authorization: Bearer ${token}\r\nMcp-Session-Id: ${sessionId}\r\nMcp-Protocol-Version: ${LATEST_PROTOCOL_VERSION}\r\nContent-Length: ${body.length}\r\n\r\n`;
  const slowBody = await trickle(server.url, head, body, 50);
  t.false(slowBody.finished, `cut off after ${slowBody.sent} of ${body.length} bytes`);
  t.regex(slowBody.answer, /^HTTP\/1\.1 408/);

  const slowHeaders = await trickle(server.url, '', head, 50);
  t.false(slowHeaders.finished, 'slow headers too');

  const before = await conversations(server);
  t.is((await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId })).status, 200, 'still serving');
  t.is(await conversations(server), before, 'the cut-off call never ran');
}, { env: { REQUEST_TIMEOUT_MS: '1500' } });

mcpTest('each connection is rate limited: 429 with Retry-After, nothing runs, other connections are unaffected', async (t, server) => {
  const limit = server.config.rateLimitPerMinute;
  const noisy = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const quiet = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const sessionId = await openSession(server, noisy.token, 'forge'); // initialize + initialized: two requests
  for (let i = 2; i < limit; i++) t.is((await rawCall(server, noisy.token, 'forge', 'tools/list', {}, { sessionId, id: i })).status, 200);
  const before = await conversations(server);
  const limited = await rawPost(server, 'forge', { token: noisy.token, sessionId, body: JSON.stringify(createCall(99, 'over the limit')) }, 99);
  t.is(limited.status, 429);
  t.regex(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  t.is(limited.body.error.code, -32029);
  t.is(limited.body.error.data.code, 'rate_limited');
  t.is(limited.body.id, 99);
  t.is(await conversations(server), before, 'the refused call did not run');
  // A new session on the same connection is limited too: the limit belongs to the connection.
  const again = await rawPost(server, 'forge', { token: noisy.token, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT }) });
  t.is(again.status, 429);
  const quietSession = await openSession(server, quiet.token, 'forge');
  t.is((await rawCall(server, quiet.token, 'forge', 'tools/list', {}, { sessionId: quietSession })).status, 200, 'another connection is not affected');
}, { env: { RATE_LIMIT_PER_MINUTE: '8' } });

mcpTest('a client calling on with a refused token is refused every time, and its records are held to the rate limit', async (t, server) => {
  const limit = server.config.rateLimitPerMinute;
  // A token of another product belongs to a connection: its refusals are audited in that tenant.
  const misdirected = await grant(server, { product: 'aegis', tenant: 'acme', scopes: ['aegis.scans.read'] });
  for (let i = 0; i < limit + 5; i++) {
    const refused = await rawCall(server, misdirected.token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { id: i, sessionId: 'never-looked-up' });
    t.is(refused.status, 401, 'refused every time, never 429: the client must learn that its token is wrong');
    t.is(refused.body.error.data.code, 'invalid_token');
  }
  t.is((await auditOf(server, 'acme', { connection_id: misdirected.connection.id })).length, limit, 'one record per call up to the limit, none after');

  // The same for a revoked connection's token.
  const revoked = await grant(server, { product: 'forge', tenant: 'acme', scopes: CHAT });
  const { revokeConnection } = await import('../../db/grant_store.js');
  await server.db.transaction((trx) => revokeConnection(trx, revoked.connection, { reason: 'test' }));
  await server.events.publish({ type: 'connection.revoked', connectionId: revoked.connection.id, grantId: revoked.connection.grant_id });
  for (let i = 0; i < limit + 5; i++) {
    const refused = await rawCall(server, revoked.token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { id: i, sessionId: 'never-looked-up' });
    t.is(refused.status, 401);
    t.is(refused.body.error.data.code, 'connection_revoked');
  }
  const records = await auditOf(server, 'acme', { connection_id: revoked.connection.id, name: 'forge.list_conversations' });
  t.deepEqual(records.map((r) => r.outcome), Array(limit).fill('connection_revoked'));
}, { env: { RATE_LIMIT_PER_MINUTE: '8' } });
