/**
 * N identical instances on one PostgreSQL (DESIGN.md §9): nothing one instance needs lives only in
 * another's memory. Revocation through one instance is refused by the other and closes its open
 * streams; a session is per instance, and another instance answers its id with the MCP-defined
 * 404 so that the client re-initializes there; confirmations live in the database.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { defaultMounts } from '../../mounts.js';
import { EventBus } from '../../shared/events.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { issueAccessToken } from '../helpers/grants.js';
import { DEMO_PASSWORD, MCP_HEADERS, readRaw, seedDemo } from '../helpers/mcp.js';
import { authorizeWithPassword, tokenRequest } from '../helpers/oauth.js';
import { within } from '../helpers/poll.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Pair {
  a: TestServer;
  b: TestServer;
  /** The public MCP URL both instances serve (as behind a load balancer). */
  mcpUrl: string;
  issue(scopes: string[]): Promise<{ token: string; connectionId: string }>;
  close(): Promise<void>;
}

/** Two instances on one PostgreSQL schema with one public address (A's), as behind a balancer; `env` configures both. */
async function twoInstances(env: Record<string, string> = {}): Promise<Pair> {
  const database = await createTestDatabase('postgres');
  const a = await startTestServer('postgres', { database, mounts: defaultMounts({ events: new EventBus() }), env });
  const b = await startTestServer('postgres', { database, mounts: defaultMounts({ events: new EventBus() }), env: { ...env, PUBLIC_AUTH_URL: a.url } });
  const db = a.portico.context.db;
  await seedDemo(db);
  const tenant = await db('tenants').where({ slug: 'acme' }).first('id');
  const user = await db('users').where({ email: 'admin@acme.example' }).first('id');
  const mcpUrl = a.config.mcpUrl;
  return {
    a, b, mcpUrl,
    async issue(scopes) {
      const { token, connection } = await issueAccessToken(db, { tenantId: tenant.id, userId: user.id, product: 'forge', resource: `${mcpUrl}/forge`, scopes });
      return { token, connectionId: connection.id };
    },
    async close() {
      await b.stop();
      await a.stop();
      await database.drop();
    },
  };
}

const at = (server: TestServer) => `${server.url}/mcp/forge`;

async function post(url: string, token: string, body: unknown, sessionId?: string) {
  const headers: Record<string, string> = { ...MCP_HEADERS, authorization: `Bearer ${token}` };
  if (sessionId) Object.assign(headers, { 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION });
  return readRaw(await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) }), (body as { id?: unknown }).id);
}

async function session(url: string, token: string): Promise<string> {
  const init = await post(url, token, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  if (!init.sessionId) throw new Error(`initialize failed: ${init.status}`);
  await post(url, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sessionId);
  return init.sessionId;
}

const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: { limit: 2 } } });

const postgres = databasesUnderTest().includes('postgres');
const pgTest = postgres ? test.serial : test.skip;

pgTest('revoking through one instance: the other refuses the connection and closes its open GET stream [postgres]', async (t) => {
  const pair = await twoInstances();
  try {
    const { token, connectionId } = await pair.issue(['forge.chat.read']);
    const sessionId = await session(at(pair.b), token);
    const stream = await fetch(at(pair.b), { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } });
    t.is(stream.status, 200);
    const reader = stream.body!.getReader();
    // B has served (and cached) this connection.
    for (let i = 1; i <= 3; i += 1) t.is((await post(at(pair.b), token, list(i), sessionId)).status, 200);

    const console = await authorizeWithPassword(pair.a.url, {
      email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource: `${pair.a.config.apiUrl}/mcp`, scopes: ['console.connections.read', 'console.connections.write'],
    });
    const revoked = await fetch(`${pair.a.config.apiUrl}/mcp/v1/connections/${connectionId}`, { method: 'DELETE', headers: { authorization: `Bearer ${console.accessToken}` } });
    t.is(revoked.status, 200, await revoked.clone().text());

    // B heard it: its stream for the connection ends (no timing asserted, the test times out otherwise) ...
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
    // ... and every further call there is refused, with the session gone too.
    const refused = await post(at(pair.b), token, list(4), sessionId);
    t.is(refused.status, 401);
    t.is(refused.body.error.data.code, 'connection_revoked');
    const fresh = await post(at(pair.b), token, { jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    t.is(fresh.status, 401);
  } finally {
    await pair.close();
  }
});

pgTest('a session of one instance is unknown to the other: MCP 404, and the SDK client re-initializes there [postgres]', async (t) => {
  const pair = await twoInstances();
  try {
    const { token } = await pair.issue(['forge.chat.read']);
    const headers = { Authorization: `Bearer ${token}` };
    const onA = new Client({ name: 'portico-test', version: '1.0.0' });
    const transportA = new StreamableHTTPClientTransport(new URL(at(pair.a)), { requestInit: { headers } });
    await onA.connect(transportA);
    t.true((await onA.listTools()).tools.some((tool) => tool.name === 'forge.list_conversations'));

    // The balancer now sends this client's session to B.
    const raw = await post(at(pair.b), token, list(1), transportA.sessionId);
    t.is(raw.status, 404);
    t.is(raw.body.error.code, -32001);
    // The SDK client resuming the session there (connect() skips initialize when it has a session id) ...
    const resumed = new Client({ name: 'portico-test', version: '1.0.0' });
    await resumed.connect(new StreamableHTTPClientTransport(new URL(at(pair.b)), { requestInit: { headers }, sessionId: transportA.sessionId }));
    // ... is told the session does not exist.
    const error = await t.throwsAsync(resumed.listTools());
    t.true(error instanceof StreamableHTTPError && error.code === 404, String(error));

    // MCP transports, session management: on 404 the client starts a new session without the old id.
    const onB = new Client({ name: 'portico-test', version: '1.0.0' });
    await onB.connect(new StreamableHTTPClientTransport(new URL(at(pair.b)), { requestInit: { headers } }));
    const result = await onB.callTool({ name: 'forge.list_conversations', arguments: { limit: 1 } });
    t.falsy(result.isError);
    await onA.close();
    await onB.close();
  } finally {
    await pair.close();
  }
});

pgTest('a confirmation asked on one instance is honoured on the other [postgres]', async (t) => {
  const pair = await twoInstances();
  try {
    const { token } = await pair.issue(['forge.chat.read', 'forge.chat.write']);
    const db = pair.a.portico.context.db;
    const tenant = await db('tenants').where({ slug: 'acme' }).first('id');
    const conversation = await db('forge_conversations').where({ tenant_id: tenant.id }).first('id');
    const call = (id: number, confirmed?: boolean) => ({
      jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'forge.delete_conversation', arguments: { conversation_id: conversation.id, ...(confirmed ? { confirmed } : {}) } },
    });
    const asked = await post(at(pair.a), token, call(1), await session(at(pair.a), token));
    t.is(asked.body.result.structuredContent.code, 'confirmation_required');
    const confirmed = await post(at(pair.b), token, call(2, true), await session(at(pair.b), token));
    t.falsy(confirmed.body.result.isError, JSON.stringify(confirmed.body));
    t.is(await db('forge_conversations').where({ id: conversation.id }).first(), undefined);
  } finally {
    await pair.close();
  }
});


pgTest('an instance that stops in the middle of a transaction holds an audit chain only until PostgreSQL ends its idle session; the other instance’s calls then go through [postgres]', async (t) => {
  // The idle-in-transaction limit must be above the tool time-out; the time-out is set just under
  // it, not far under: a first call on a loaded machine (a new pool connection) can take 200 ms.
  const pair = await twoInstances({ TOOL_TIMEOUT_MS: '900', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1000' });
  let stalled: Knex.Transaction | undefined;
  try {
    const { token } = await pair.issue(['forge.chat.read']);
    const sessionId = await session(at(pair.a), token);
    const first = await post(at(pair.a), token, list(1), sessionId);
    t.is(first.status, 200);
    t.true(first.body.result && !first.body.result.isError, `the chain has a head: ${JSON.stringify(first.body)}`);
    const tenant = await pair.a.portico.context.db('tenants').where({ slug: 'acme' }).first('id');
    // B's own pool, as B's code uses it: a transaction that took the tenant's audit head and then
    // went quiet (B frozen, paused, cut off). Begun only now: PostgreSQL ends a transaction idle
    // for a second, and the steps above took longer than that on a loaded machine.
    stalled = await pair.b.portico.context.db.transaction();
    await stalled.raw('select seq from audit_heads where chain = ? for update', [tenant.id]);

    const started = performance.now();
    const answer = await within(15_000, post(at(pair.a), token, list(2), sessionId));
    const waited = performance.now() - started;
    t.truthy(answer, 'the call was still waiting for the stalled transaction after 15 s');
    t.is(answer!.status, 200);
    t.falsy(answer!.body.result.isError, JSON.stringify(answer!.body));
    t.true(waited >= 500, `the call waited for the head's lock (${Math.round(waited)} ms)`);
    const records = await pair.a.portico.context.db('audit_log').where({ tenant_id: tenant.id, name: 'forge.list_conversations', outcome: 'ok' }).count({ n: '*' }).first();
    t.is(Number(records!.n), 2, 'both calls are audited, once each');

    // PostgreSQL ended the stalled session: that transaction cannot go on, and B's pool serves on with a new connection.
    await t.throwsAsync(stalled.raw('select 1'));
    t.deepEqual((await pair.b.portico.context.db.transaction((trx) => trx.raw('select 1 as one'))).rows, [{ one: 1 }]);
    t.is((await post(at(pair.b), token, list(3), await session(at(pair.b), token))).status, 200);
  } finally {
    await stalled?.rollback().catch(() => undefined);
    await pair.close();
  }
});

pgTest('a refresh repeated at the other instance gets the same answer [postgres]', async (t) => {
  const pair = await twoInstances();
  try {
    const tokens = await authorizeWithPassword(pair.a.url, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource: `${pair.mcpUrl}/forge`, scopes: ['forge.chat.read'] });
    const refreshAt = (server: TestServer) => tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId });
    const answers = await Promise.all([refreshAt(pair.a), refreshAt(pair.b)]);
    t.deepEqual(answers.map((a) => a.status), [200, 200]);
    const [first, second] = (await Promise.all(answers.map((a) => a.json()))) as { access_token: string; refresh_token: string }[];
    t.deepEqual([second.access_token, second.refresh_token], [first.access_token, first.refresh_token], 'one chain across the instances');
    const call = await post(at(pair.b), first.access_token, list(1), await session(at(pair.b), first.access_token));
    t.is(call.status, 200);
  } finally {
    await pair.close();
  }
});
