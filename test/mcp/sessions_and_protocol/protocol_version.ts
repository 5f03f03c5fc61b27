/**
 * MCP transports (2025-06-18+, "Protocol Version Header"): a request with an unsupported
 * MCP-Protocol-Version (an empty one included) is answered 400 before anything is checked or run
 * (checklist I6), also for calls the pipeline's pre-check would refuse.
 */
import { auditOf, grant, mcpTest, openSession, rawPost } from '../../helpers/mcp.js';

mcpTest('an unsupported MCP-Protocol-Version is 400 for every method, before any scope or tool check', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const cases: Array<[string, Record<string, unknown>]> = [
    ['tools/list', {}],
    ['tools/call', { name: 'forge.list_conversations', arguments: {} }],
    ['tools/call', { name: 'forge.delete_conversation', arguments: { conversation_id: 'x' } }], // lacks forge.chat.write
    ['tools/call', { name: 'forge.no_such_tool', arguments: {} }],
  ];
  let id = 0;
  // Present but empty is no version either, unlike a header left out (the transport then assumes 2025-03-26).
  for (const version of ['1999-01-01', '', ' ']) {
    const headers = { 'mcp-protocol-version': version };
    const statuses: string[] = [];
    for (const [method, params] of cases) {
      id += 1;
      const response = await rawPost(server, 'forge', { token, sessionId, headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }, id);
      statuses.push(`${method} ${String(params.name ?? '')}: ${response.status}`);
    }
    t.deepEqual(statuses, cases.map(([method, params]) => `${method} ${String(params.name ?? '')}: 400`), JSON.stringify(version));
  }
  t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => r.outcome), [], 'nothing ran, nothing to audit as a tool refusal');
});
