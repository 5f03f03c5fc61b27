/**
 * A tools/call, resources/read or prompts/get whose params do not fit the method is refused as
 * invalid_arguments and audited once, whichever check refuses it (the pipeline's pre-check, or
 * the host's schema check of the rest). A malformed `_meta` is not among them: the SDK's
 * transport refuses that message whole (400 -32700, test/security/jsonrpc_input.test.ts).
 */
import { auditOf, grant, mcpTest, openSession, rawPost } from '../../helpers/mcp.js';

mcpTest('every refused tools/call / resources/read / prompts/get with invalid params is audited once', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const cases: Array<[string, Record<string, unknown>]> = [
    ['tools/call', { name: 'forge.list_conversations', arguments: {}, task: 'soon' }],
    ['resources/read', { uri: 5 }],
    ['prompts/get', { name: 'forge.summarize_conversation', arguments: { conversation_id: 5 } }],
  ];
  let id = 20;
  for (const [method, params] of cases) {
    id += 1;
    const response = await rawPost(server, 'forge', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }, id);
    t.is(response.body.error?.data?.code, 'invalid_arguments', `${method}: ${response.text.slice(0, 200)}`);
  }
  const records = await auditOf(server, 'acme', { connection_id: connection.id });
  t.deepEqual(records.map((r) => `${r.kind} ${r.outcome}`), ['tool invalid_arguments', 'resource invalid_arguments', 'prompt invalid_arguments'],
    'a refused call is recorded, as precheck records the other invalid params');
});
