/**
 * Stored arguments are redacted: "keys that look like secrets" (docs/decisions.md). The audit log
 * is append-only and chained, so a secret written there in clear can never be taken out again
 * without breaking the chain. A caller's arguments reach the log even when the call is refused
 * (an unknown tool, a field the schema does not know), so every common name of a secret counts.
 */
import test from 'ava';
import { redactArguments } from '../../../db/audit.js';
import { auditOf, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

const SECRET = 'S3CRET-do-not-store';
const SECRET_KEYS = ['private_key', 'privateKey', 'signing_key', 'ssh_key', 'access_key', 'cookie', 'pwd', 'code_verifier', 'jwt', 'bearer'];

test('arguments named like a key, cookie, verifier or bearer token are redacted', (t) => {
  const stored = redactArguments(Object.fromEntries(SECRET_KEYS.map((key) => [key, SECRET]))) as Record<string, unknown>;
  for (const key of SECRET_KEYS) t.is(stored[key], '[redacted]', key);
  // Names that only resemble them keep their values: the audit log must stay useful.
  t.deepEqual(redactArguments({ cookie_keys: 1, monkey: 'x', keyword: 'y', email: 'e@x' }), { cookie_keys: 1, monkey: 'x', keyword: 'y', email: 'e@x' });
});

mcpTest('a refused call with secret-looking arguments stores none of them in clear', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const args = Object.fromEntries(SECRET_KEYS.map((key) => [key, SECRET]));
  const unknown = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.connect_repository', arguments: args }, { sessionId, id: 1 });
  t.is(unknown.body.error.data.code, 'unknown_tool');
  const extra = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: args }, { sessionId, id: 2 });
  t.is(extra.body.error.data.code, 'invalid_arguments');
  const records = await auditOf(server, 'acme', { connection_id: connection.id });
  t.deepEqual(records.map((r) => r.outcome), ['unknown_tool', 'invalid_arguments']);
  for (const record of records) t.false(String(record.args_redacted).includes(SECRET), record.args_redacted ?? '');
});
