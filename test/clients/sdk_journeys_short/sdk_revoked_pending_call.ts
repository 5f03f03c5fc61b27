/**
 * The person revokes a chat assistant's connection in the console while the assistant holds its
 * GET stream and a tool call is pending: a destructive call whose confirmation the server asked the
 * person through the client (elicitation). The console promises that revocation takes effect at
 * once and open streams close; the pending call should end at once too, saying why, and, as every
 * call's reply, only once its audit record is durable (DESIGN.md §6), with the code it was answered.
 */
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { revokeConnection, type DbConnectionRow } from '../../../db/grant_store.js';
import { mcpTest } from '../../helpers/mcp.js';
import { assistant, signedIn } from '../sdk_journeys_support.js';

mcpTest('a call waiting for the person’s confirmation ends at once, as connection_revoked, when the connection is revoked', async (t, server) => {
  const provider = assistant(server);
  const { client } = await signedIn(server, provider, 'forge', { capabilities: { elicitation: { form: {} } } });
  let asked!: () => void;
  const question = new Promise<void>((resolve) => (asked = resolve));
  // The person has not answered yet when the connection is revoked.
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked();
    return new Promise(() => undefined); // the person never answers
  });
  try {
    const created = await client.callTool({ name: 'forge.create_conversation', arguments: { title: 'Kept' } });
    const id = (created.structuredContent as { id: string }).id;
    const pending = client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: id } }, undefined, { timeout: 15_000 })
      .then((result) => ({ result, error: undefined }), (error: unknown) => ({ result: undefined, error }));
    await question;

    // What the console's revoke does (auth/console: revokeConnection, then connection.revoked on the bus).
    const connection: DbConnectionRow = await server.db('connections').whereNull('revoked_at').first();
    await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'revoked in the console' }));
    const revokedAt = Date.now();
    await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });

    const outcome = await pending;
    const waited = Date.now() - revokedAt;
    // Read the moment the reply arrived: a record written after it, or as `timeout`, fails here.
    const records = await server.db('audit_log').where({ connection_id: connection.id, name: 'forge.delete_conversation' }).select('outcome');
    t.deepEqual(records.map((r: { outcome: string }) => r.outcome), ['connection_revoked'], 'the call was audited as it was answered, before the reply');
    t.true(waited < 3000, `the pending call ended ${waited} ms after the revocation: ${String(outcome.error ?? JSON.stringify(outcome.result))}`);
    t.regex(String(outcome.error ?? JSON.stringify(outcome.result)), /revoked/, 'the client is told the connection was revoked');
    t.truthy(await server.db('forge_conversations').where({ id }).first(), 'nothing was deleted');
  } finally {
    await client.close();
  }
});
