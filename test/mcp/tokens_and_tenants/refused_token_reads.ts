/**
 * A call refused at the token check looks up whose token it was (to audit the refusal in that
 * tenant's log) on the read side, as the token check itself reads: a token nobody owns, which
 * anyone may send, is refused without waiting for the one SQLite writer, however long a write
 * transaction holds it.
 */
import { mcpTest, rawCall } from '../../helpers/mcp.js';

mcpTest('an unknown token on tools/call is refused at once while a write transaction holds the writer', async (t, server) => {
  const writing = await server.db.transaction();
  try {
    const refusal = rawCall(server, 'not-a-token-anyone-was-issued', 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { id: 1, sessionId: 'never-looked-up' });
    const first = await Promise.race([refusal, new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 5_000))]);
    if (first === 'held') return t.fail('the refusal waited for the write transaction to end');
    t.is(first.status, 401, first.text.slice(0, 200));
    t.is(first.body.error.data.code, 'invalid_token');
  } finally {
    await writing.rollback();
  }
});
