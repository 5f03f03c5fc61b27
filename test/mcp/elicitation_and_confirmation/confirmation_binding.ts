/**
 * a destructive tool's confirmation (DESIGN.md §6 step 5) is single use and bound to its
 * tool. The existing tests could not notice either binding's removal: their replay deletes a
 * record that is already gone (not_found either way), and no two destructive tools of one
 * product take the same arguments.
 */
import { z } from 'zod';
import { PRODUCTS } from '../../../mcp/products/index.js';
import { defineProduct, defineTool } from '../../../shared/catalog.js';
import { auditOf, connect, grant, mcpTest } from '../../helpers/mcp.js';

type Result = { isError?: boolean; structuredContent?: Record<string, unknown> };
const codeOf = (result: Result) => (result.isError ? String(result.structuredContent?.code) : 'ok');

mcpTest('a used confirmation is spent: the same confirmed call later asks again and does not run the tool', async (t, server) => {
  const { client, connection, close } = await connect(server, { product: 'herald', tenant: 'acme', scopes: ['herald.trust.read', 'herald.trust.write'] });
  try {
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result;
    const created = await call('herald.create_document', { title: 'Security whitepaper', category: 'report', body: 'Text.' });
    t.is(codeOf(created), 'ok', JSON.stringify(created));
    const id = String(created.structuredContent!.id);
    t.is(codeOf(await call('herald.publish_document', { document_id: id })), 'ok');

    // Unpublished with the person's confirmation ...
    t.is(codeOf(await call('herald.unpublish_document', { document_id: id })), 'confirmation_required');
    t.is(codeOf(await call('herald.unpublish_document', { document_id: id, confirmed: true })), 'ok');
    // ... published again, and then the old confirmed call replayed: the person never agreed to this one.
    t.is(codeOf(await call('herald.publish_document', { document_id: id })), 'ok');
    const replay = await call('herald.unpublish_document', { document_id: id, confirmed: true });
    t.is(codeOf(replay), 'confirmation_required', JSON.stringify(replay));
    const row = await server.db('herald_documents').where({ id }).first('status');
    t.is(row?.status, 'published', 'the replayed confirmation unpublished nothing');
    const outcomes = (await auditOf(server, 'acme', { connection_id: connection.id, name: 'herald.unpublish_document' })).map((r) => r.outcome);
    t.deepEqual(outcomes, ['confirmation_required', 'ok', 'confirmation_required']);
  } finally {
    await close();
  }
});

/** Two destructive tools taking the same arguments: a confirmation for one must not confirm the other. */
const twin = defineProduct({
  id: 'twin',
  title: 'Twin',
  kind: 'test',
  status: 'live',
  scopes: { 'twin.things.write': 'Change test things' },
  tools: ['archive', 'purge'].map((verb) =>
    defineTool({
      name: `twin.${verb}_thing`,
      title: `${verb} a thing`,
      description: `Test tool: ${verb}s a thing (changes nothing; the audit record shows it ran).`,
      scope: 'twin.things.write',
      destructive: true,
      confirmation: `The thing {label} will be ${verb}d.`,
      input: { label: z.string().min(1).max(50) },
      async handler({ label }) {
        return { label, done: verb };
      },
    })),
  resources: [],
  prompts: [],
});

mcpTest('a confirmation is bound to its tool: confirming one destructive tool does not confirm another with the same arguments', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'twin', tenant: 'acme', scopes: ['twin.things.write'] });
  const { client, close } = await connect(server, { product: 'twin', tenant: 'acme', scopes: ['twin.things.write'], token });
  try {
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result;
    t.is(codeOf(await call('twin.archive_thing', { label: 'x' })), 'confirmation_required');
    // The person agreed to archive x, not to purge it.
    const purge = await call('twin.purge_thing', { label: 'x', confirmed: true });
    t.is(codeOf(purge), 'confirmation_required', JSON.stringify(purge));
    // The pending archive confirmation is still there and still works for its own tool.
    t.is(codeOf(await call('twin.archive_thing', { label: 'x', confirmed: true })), 'ok');
    const ran = (await auditOf(server, 'acme', { connection_id: connection.id, outcome: 'ok' })).map((r) => r.name);
    t.deepEqual(ran, ['twin.archive_thing']);
  } finally {
    await close();
  }
}, { products: [...PRODUCTS, twin] });
