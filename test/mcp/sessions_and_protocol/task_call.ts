/**
 * Portico declares no tasks capability: a tools/call carrying `params.task` (task augmentation)
 * is refused as invalid_arguments naming params.task, with data.code and request_id like every
 * other error (DESIGN.md §7), and audited.
 */
import { auditOf, grant, mcpTest, openSession, rawPost } from '../../helpers/mcp.js';

mcpTest('a task-augmented tools/call is refused with a Portico error (data.code, request_id), audited once', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const body = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: { limit: 1 }, task: { ttl: 1000 } } });
  const response = await rawPost(server, 'forge', { token, sessionId, body }, 8);
  const error = response.body?.error;
  t.is(error?.code, -32602, response.text.slice(0, 300));
  t.is(error?.data?.code, 'invalid_arguments');
  t.is(error?.data?.field, 'params.task');
  t.regex(String(error?.data?.request_id), /\S/, 'a request id');
  const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.list_conversations' });
  t.deepEqual(records.map((r) => r.outcome), ['invalid_arguments'], 'the call is audited once, as refused');
});
