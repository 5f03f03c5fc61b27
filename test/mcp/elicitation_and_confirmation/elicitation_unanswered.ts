/**
 * A client that declares elicitation but cannot answer the confirmation question: its answer is a
 * JSON-RPC error (no handler, a dialog that failed) or no answer to the form (the SDK refuses
 * it). Nobody could be asked, which is no internal error of the call: nothing is changed and the
 * call asks for a confirmation as it does of a client without elicitation (confirmation_required,
 * then the same call with confirmed: true).
 */
import { McpError, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { auditOf, connect, mcpTest } from '../../helpers/mcp.js';

const SCOPES = ['forge.chat.read', 'forge.chat.write'];

const unanswerable: Array<[string, () => ElicitResult]> = [
  ['a JSON-RPC error', () => {
    throw new McpError(-32603, 'the dialog could not be shown');
  }],
  ['an answer that is not the form’s', () => ({ action: 'accept', content: { confirm: 'yes' } })],
];

for (const [what, elicit] of unanswerable) {
  mcpTest(`a confirmation answered with ${what} changes nothing and falls back to confirmation_required, not internal`, async (t, server) => {
    let asked = 0;
    const { client, connection, close } = await connect(server, {
      product: 'forge', tenant: 'acme', scopes: SCOPES,
      elicit: () => {
        asked += 1;
        return elicit();
      },
    });
    try {
      const target = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).first('id');
      const first = await client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id } }).catch((error: unknown) => error);
      t.is((first as any).structuredContent?.code, 'confirmation_required', JSON.stringify(first));
      t.true((first as any).isError);
      t.is(asked, 1, 'the person was asked through the client first');
      t.truthy(await server.db('forge_conversations').where({ id: target.id }).first(), 'nothing was deleted');

      const confirmed = await client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id, confirmed: true } });
      t.falsy(confirmed.isError, JSON.stringify(confirmed));
      t.is(await server.db('forge_conversations').where({ id: target.id }).first(), undefined);
      t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => r.outcome), ['confirmation_required', 'ok']);
    } finally {
      await close();
    }
  });
}
