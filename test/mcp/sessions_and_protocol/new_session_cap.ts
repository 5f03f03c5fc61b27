/**
 * A new session is the connection's most recently used one from the moment it joins the registry:
 * requests its other sessions make while the SDK handles its initialize must not make it the
 * least recently used, or the connection's cap (MAX_SESSIONS_PER_CONNECTION) would close it at
 * once and its client would hold a session id that answers 404.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { grant, mcpTest, openSession, rawCall, rawPost } from '../../helpers/mcp.js';

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

mcpTest('a session whose initialize overlaps requests of the connection\'s other sessions is not the one the cap closes', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const older = await openSession(server, token, 'forge');

  // The next initialize is held once the SDK's transport has accepted it, before the host registers its session.
  const prototype = WebStandardStreamableHTTPServerTransport.prototype;
  const handleRequest = prototype.handleRequest;
  let accepted!: () => void;
  const initializing = new Promise<void>((resolve) => (accepted = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  prototype.handleRequest = async function (this: WebStandardStreamableHTTPServerTransport, ...args: Parameters<typeof handleRequest>) {
    const response = await handleRequest.apply(this, args);
    if ((args[1]?.parsedBody as { method?: string } | undefined)?.method === 'initialize') {
      accepted();
      await released;
    }
    return response;
  };
  try {
    const opening = rawPost(server, 'forge', { token, body: INIT }, 0);
    await initializing;
    // The older session is used while the new one is being opened, a millisecond or more after it was made.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const used = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId: older, id: 1 });
    t.is(used.status, 200, used.text.slice(0, 200));
    release();
    const opened = await opening;
    t.is(opened.status, 200, opened.text.slice(0, 200));
    t.truthy(opened.sessionId);

    const fresh = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId: opened.sessionId, id: 2 });
    t.is(fresh.status, 200, `the new session is open: ${fresh.text.slice(0, 200)}`);
    t.true(Array.isArray(fresh.body?.result?.tools));
    const evicted = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId: older, id: 3 });
    t.is(evicted.status, 404, 'the older session is the least recently used one, and the cap closed it');
  } finally {
    release();
    prototype.handleRequest = handleRequest;
  }
}, { env: { MAX_SESSIONS_PER_CONNECTION: '1' } });
