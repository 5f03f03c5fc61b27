/**
 * What a caller writes decides how large its audit records get, and the audit log is never
 * purged: the stored (redacted) arguments are bounded however long the argument names are, as
 * long string values are (docs/decisions.md, "long strings cut"). The digest still covers the
 * arguments as sent.
 */
import { auditOf, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

/** Far below the 1 MiB body limit, far above anything a record of capped values holds. */
const RECORD_BOUND = 64 * 1024;

mcpTest('argument names as long as the body allows leave a record of bounded size, for refused and for run calls', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const longName = 'k'.repeat(300_000);
  const nested = { outer: { [longName]: 1 } };

  const unknown = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.no_such_tool', arguments: { [longName]: 1, b: nested } }, { sessionId, id: 1 });
  t.is(unknown.body?.error?.data?.code, 'unknown_tool');
  const invalid = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: { [longName]: 1 } }, { sessionId, id: 2 });
  t.is(invalid.body?.error?.data?.code, 'invalid_arguments');
  // Every name and value within the per-string cut, but many of them: 50 × 50 names of 200 characters.
  const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padEnd(200, 'w'), Object.fromEntries(Array.from({ length: 50 }, (_, j) => [`${j}`.padEnd(200, 'v'), 'x'.repeat(150)]))]));
  const wideCall = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.another_missing_tool', arguments: wide }, { sessionId, id: 3 });
  t.is(wideCall.body?.error?.data?.code, 'unknown_tool');

  const records = await auditOf(server, 'acme', { connection_id: connection.id });
  const named = records.filter((r) => ['forge.no_such_tool', 'forge.list_conversations', 'forge.another_missing_tool'].includes(r.name));
  t.is(named.length, 3, 'every call is audited');
  for (const record of named) {
    t.truthy(record.args_digest, 'the digest covers the arguments as sent');
    t.true((record.args_redacted ?? '').length < RECORD_BOUND, `${record.name}: stored arguments of ${(record.args_redacted ?? '').length} characters`);
  }
});
