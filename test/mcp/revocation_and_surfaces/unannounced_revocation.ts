/**
 * A write call commits only on a live connection (db/grant_store.ts touchLiveConnection: "a call whose
 * transaction commits after a revocation never takes effect, whether or not this instance heard of
 * it yet"). Here the revocation is committed by another instance (the database only, no event), and
 * the caller's token is still in this instance's principal cache: the call is admitted from the
 * cache and must still fail connection_revoked with nothing written. (Should the once-a-second sweep
 * find the revocation first, the call is refused at the door: the outcome asserted is the same.)
 * The other revocation tests announce the revocation, which cancels the call before it commits.
 */
import { revokeConnection } from '../../../db/grant_store.js';
import { grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

mcpTest('a write call on a connection revoked elsewhere, still cached here, fails connection_revoked and writes nothing', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
  const sessionId = await openSession(server, token, 'forge');
  t.is((await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} }, { sessionId })).status, 200, 'the token is cached');
  const count = async () => Number((await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).count({ n: '*' }).first())?.n);
  const before = await count();

  // Another instance revokes: the database changes, this instance is told nothing.
  await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' }));
  const call = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.create_conversation', arguments: { title: 'after the revocation' } }, { sessionId });
  const code = call.body?.error?.data?.code ?? call.body?.result?.structuredContent?.code;
  t.is(code, 'connection_revoked', call.text.slice(0, 300));
  t.is(await count(), before, 'nothing was written');
});
