/**
 * A session with a call in flight is not idle: the SESSION_IDLE_MS sweeper leaves it open while a
 * long tool call runs or the person is still answering a confirmation, and the idle time counts
 * from the end of its last call, not from that call's arrival. Nor is one whose client listens on
 * its GET stream: idle time counts from the stream's end. A session nothing happens on is still
 * closed. Over MAX_SESSIONS_PER_CONNECTION, a session with nothing in flight is closed
 * before a less recently used one whose call is running.
 */
import test from 'ava';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { databasesUnderTest } from '../helpers/db.js';
import { auditOf, connect, grant, mcpTest, type McpTestServer, openSession, openSessions, rawPost } from '../helpers/mcp.js';
import { until } from '../helpers/poll.js';
import { gate, startFaultServer } from '../reliability/support.js';

const IDLE_MS = 1_000;
/** Well past SESSION_IDLE_MS and several of the sweeper's rounds (every IDLE_MS / 4). */
const LONGER_THAN_IDLE = 1_800;
/** Under SESSION_IDLE_MS but past two sweeper rounds. */
const SHORTER_THAN_IDLE = 550;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens the session's GET stream, as a client listening for the server's notifications does. */
function listen(server: McpTestServer, token: string, sessionId: string, signal: AbortSignal): Promise<Response> {
  return fetch(`${server.mcpUrl}/forge`, {
    signal,
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
  });
}

for (const kind of databasesUnderTest()) {
  test(`a tool call running longer than SESSION_IDLE_MS keeps its session; the idle time counts from the call's end [${kind}]`, async (t) => {
    const server = await startFaultServer(kind, { env: { SESSION_IDLE_MS: String(IDLE_MS) } });
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.read'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const post = (id: number, method: string, params: unknown) => rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }, id);

      const held = gate('long');
      const call = post(1, 'tools/call', { name: 'faultlab.read_markers', arguments: { name: 'long' } });
      call.catch(() => undefined); // awaited below
      await held.entered;
      await sleep(LONGER_THAN_IDLE);
      t.false(held.signal!.aborted, 'the call was not cancelled by the idle sweeper');
      held.release();
      const answered = await call;
      t.is(answered.status, 200, answered.text.slice(0, 300));
      t.deepEqual(answered.body.result?.structuredContent, { name: 'long', count: 0 }, answered.text.slice(0, 300));
      t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => [r.name, r.outcome]), [['faultlab.read_markers', 'ok']]);

      await sleep(SHORTER_THAN_IDLE);
      const next = await post(2, 'ping', {});
      t.is(next.status, 200, `the session is open right after its long call ended: ${next.text.slice(0, 300)}`);

      // Watched without a request, which would make it active again.
      t.true(await until(10_000, async () => ((await openSessions(server)) === 0 ? true : undefined)), 'the idle session is still open');
      t.is((await post(3, 'ping', {})).status, 404, 'with nothing in flight, an idle session is still closed');
    } finally {
      await server.close();
    }
  });
}

mcpTest('a session whose client listens on its GET stream longer than SESSION_IDLE_MS stays open; idle time counts from the stream\'s end', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const listening = new AbortController();
  const stream = await listen(server, token, sessionId, listening.signal);
  t.is(stream.status, 200);
  const ended = stream.body!.pipeTo(new WritableStream()).then(() => 'ended', () => 'aborted');

  await sleep(LONGER_THAN_IDLE);
  // Watched without a request, which would make it active again.
  t.is(await openSessions(server), 1, 'the sweeper closed a session whose client was listening');
  t.is(await Promise.race([ended, sleep(0).then(() => 'open')]), 'open', 'the GET stream was ended');

  listening.abort();
  t.is(await ended, 'aborted');
  t.true(await until(10_000, async () => ((await openSessions(server)) === 0 ? true : undefined)), 'the session is still open after its stream ended');
  t.is((await rawPost(server, 'forge', { token, sessionId, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }, 1)).status, 404);
}, { env: { SESSION_IDLE_MS: String(IDLE_MS) } });

for (const kind of databasesUnderTest()) {
  test(`over the connection's session cap, an idle session goes before a less recently used one with a call running [${kind}]`, async (t) => {
    const server = await startFaultServer(kind, { env: { MAX_SESSIONS_PER_CONNECTION: '2' } });
    try {
      const { token } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.read'] });
      const post = (sessionId: string, id: number, method: string, params: unknown) =>
        rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }, id);
      const working = await openSession(server, token, 'faultlab');
      const held = gate('capped');
      const call = post(working, 1, 'tools/call', { name: 'faultlab.read_markers', arguments: { name: 'capped' } });
      call.catch(() => undefined); // awaited below
      await held.entered;
      const idle = await openSession(server, token, 'faultlab');
      t.is((await post(idle, 2, 'ping', {})).status, 200, 'the idle session is the more recently used one');

      const third = await openSession(server, token, 'faultlab');
      t.is((await post(idle, 3, 'ping', {})).status, 404, 'the idle session was closed for the new one');
      t.false(held.signal!.aborted, 'the running call was not cut off');
      held.release();
      const answered = await call;
      t.is(answered.status, 200, answered.text.slice(0, 300));
      t.deepEqual(answered.body.result?.structuredContent, { name: 'capped', count: 0 }, answered.text.slice(0, 300));
      t.is((await post(third, 4, 'ping', {})).status, 200, 'the new session is open');
    } finally {
      await server.close();
    }
  });
}

mcpTest('over the connection\'s session cap, a session whose client listens on its GET stream is in use: a more recently pinged one goes first', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const ping = (sessionId: string, id: number) => rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }) }, id);
  const listener = await openSession(server, token, 'forge');
  const listening = new AbortController();
  const stream = await listen(server, token, listener, listening.signal);
  t.is(stream.status, 200);
  try {
    const pinged = await openSession(server, token, 'forge');
    t.is((await ping(pinged, 1)).status, 200);
    await openSession(server, token, 'forge');
    t.is((await ping(pinged, 2)).status, 404, 'the session that was only pinged went for the new one');
    t.is((await ping(listener, 3)).status, 200, 'the listening session is open');
  } finally {
    listening.abort();
  }
}, { env: { MAX_SESSIONS_PER_CONNECTION: '2' } });

mcpTest('a session whose person takes longer than SESSION_IDLE_MS to answer a confirmation stays open, and the call goes through', async (t, server) => {
  const target = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).first('id');
  const person = await connect(server, {
    product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'],
    elicit: async () => {
      await sleep(LONGER_THAN_IDLE);
      return { action: 'accept', content: { confirm: true } };
    },
  });
  try {
    const result = await person.client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id } }, undefined, { timeout: 10_000 })
      .catch((error: Error) => error);
    t.false(result instanceof Error, `the call was answered: ${String(result)}`);
    t.falsy((result as { isError?: boolean }).isError, JSON.stringify(result).slice(0, 300));
    t.falsy(await server.db('forge_conversations').where({ id: target.id }).first(), 'the conversation was deleted');
    t.deepEqual((await auditOf(server, 'acme', { connection_id: person.connection.id, name: 'forge.delete_conversation' })).map((r) => r.outcome), ['ok']);
    await sleep(SHORTER_THAN_IDLE);
    const tools = await person.client.listTools(undefined, { timeout: 5_000 }).catch((error: Error) => error);
    t.false(tools instanceof Error, `the session is open after the call: ${String(tools)}`);
  } finally {
    await person.close();
  }
}, { env: { SESSION_IDLE_MS: String(IDLE_MS) } });
