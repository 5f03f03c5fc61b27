/**
 * Shutdown (README "Operational endpoints", main.ts on SIGTERM) lets a tool call that is running
 * when it begins finish, instead of cancelling it; the control runs the same call, with the same
 * lock, without a shutdown.
 */
import test from 'ava';
import { Database } from '../../db/sqlite_client.js';
import { grant, openSession, rawCall, startMcpServer } from '../helpers/mcp.js';

test('shutdown lets an in-flight MCP tool call finish [sqlite]', async (t) => {
  const server = await startMcpServer('sqlite');
  try {
    const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
    const sessionId = await openSession(server, token, 'forge');
    // Another process holds SQLite's write lock for a moment, so the call is in flight (waiting on
    // busy_timeout, as it would on any slow write) when the shutdown begins.
    const filename = (server.database.config as { filename: string }).filename;
    const holder = new Database(filename);
    holder.exec('BEGIN IMMEDIATE');
    const call = rawCall(server, token, 'forge', 'tools/call', { name: 'forge.create_conversation', arguments: { title: 'in flight at SIGTERM' } }, { sessionId, id: 9 });
    await new Promise((r) => setTimeout(r, 300));
    const stopping = server.stop();
    await new Promise((r) => setTimeout(r, 700));
    holder.exec('ROLLBACK');
    holder.close();
    const answer = await call;
    await stopping;
    t.is(answer.status, 200);
    t.is(answer.body?.error, undefined, `the in-flight call was not allowed to finish: ${JSON.stringify(answer.body?.error)}`);
    t.truthy(answer.body?.result?.structuredContent?.id ?? answer.body?.result);
  } finally {
    await server.close();
  }
});

test('control: the same call with the same lock and no shutdown succeeds [sqlite]', async (t) => {
  const server = await startMcpServer('sqlite');
  try {
    const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
    const sessionId = await openSession(server, token, 'forge');
    const holder = new Database((server.database.config as { filename: string }).filename);
    holder.exec('BEGIN IMMEDIATE');
    const call = rawCall(server, token, 'forge', 'tools/call', { name: 'forge.create_conversation', arguments: { title: 'control' } }, { sessionId, id: 9 });
    await new Promise((r) => setTimeout(r, 1000));
    holder.exec('ROLLBACK');
    holder.close();
    const answer = await call;
    t.is(answer.body?.error, undefined);
  } finally {
    await server.close();
  }
});
