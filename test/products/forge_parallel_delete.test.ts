/**
 * A conversation deleted while messages are being added to it: each add_message either lands
 * before the deletion (and goes with the conversation, counted in what the deletion reports) or
 * answers not_found; none fails as internal, and no message outlives its conversation, on every database.
 */
import { connect, mcpTest, auditOf } from '../helpers/mcp.js';
import { call, confirmation, unexpected } from './parallel_support.js';

mcpTest('messages added while their conversation is deleted land before the deletion or answer not_found', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
  try {
    for (let round = 0; round < 6; round += 1) {
      const created = await call(client, 'forge.create_conversation', { title: `Parallel ${round}`, first_message: 'hello' });
      t.true(created.ok, JSON.stringify(created));
      const id: string = created.value.id;
      const deleteNow = await confirmation(client, 'forge.delete_conversation', { conversation_id: id });
      const adds = Array.from({ length: 4 }, (_, i) => () => call(client, 'forge.add_message', { conversation_id: id, content: `message ${i}` }));
      const [deleted, ...added] = await Promise.all([deleteNow(), ...adds.map((add) => add())]);
      t.true(deleted.ok, JSON.stringify(deleted));
      t.deepEqual(unexpected(added, ['not_found']), [], `round ${round}: every add_message succeeded or answered not_found`);
      t.is(deleted.value.messages_deleted, 1 + added.filter((o) => o.ok).length, `round ${round}: the deletion counts every message that went with it`);
      t.is((await server.db('forge_conversations').where({ id })).length, 0);
      t.is((await server.db('forge_messages').where({ conversation_id: id })).length, 0, 'no message outlives its conversation');
    }
    const records = await auditOf(server, 'acme', { name: 'forge.add_message' });
    t.deepEqual(records.filter((r) => !['ok', 'not_found'].includes(r.outcome)).map((r) => r.outcome), [], 'audited as ok or not_found');
  } finally {
    await close();
  }
});
