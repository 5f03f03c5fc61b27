/**
 * A session joins the registry (and counts against MAX_SESSIONS_PER_CONNECTION, which closes the
 * least recently used one) only once the SDK accepted its initialize: refused initializes (406,
 * an Accept without text/event-stream; an initialize sent as a notification) hand out no session
 * id and close no working session.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { grant, mcpTest, openSession, rawCall, rawPost } from '../../helpers/mcp.js';

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

mcpTest('a refused initialize opens no session and closes none of the connection\'s sessions', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  for (let i = 0; i < 3; i += 1) {
    const refused = await rawPost(server, 'forge', { token, body: INIT, headers: { accept: 'application/json' } }, 0);
    t.is(refused.status, 406);
    t.is(refused.sessionId, undefined, 'no session id is handed out');
  }
  const after = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId, id: 5 });
  t.is(after.status, 200, `the working session is still open: ${after.text.slice(0, 200)}`);
  t.true(Array.isArray(after.body?.result?.tools));
}, { env: { MAX_SESSIONS_PER_CONNECTION: '2' } });

mcpTest('an initialize sent as a notification is 400 and opens no session: the connection\'s sessions stay open', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const notification = JSON.stringify({ ...JSON.parse(INIT), id: undefined });
  for (let i = 0; i < 3; i += 1) {
    const refused = await rawPost(server, 'forge', { token, body: notification });
    t.is(refused.status, 400, refused.text.slice(0, 200));
    t.is(refused.body.id, null);
    t.is(refused.body.error.code, -32600);
    t.is(refused.body.error.data.code, 'invalid_request');
    t.is(refused.sessionId, undefined, 'no session id is handed out');
  }
  const after = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId, id: 5 });
  t.is(after.status, 200, `the working session is still open: ${after.text.slice(0, 200)}`);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  t.is(/^portico_mcp_sessions (\d+)$/m.exec(metrics)?.[1], '1', 'only the working session is held');
}, { env: { MAX_SESSIONS_PER_CONNECTION: '2' } });
