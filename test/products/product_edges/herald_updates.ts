/**
 * herald's update tools, as the other products' (harvest, reclaim, people): a call that changes
 * nothing writes nothing, so a record's updated_at says when it last changed. Found by a review.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ExecutionContext } from 'ava';
import { herald } from '../../../mcp/products/herald/index.js';
import { connect, mcpTest } from '../../helpers/mcp.js';

async function ok(t: ExecutionContext, client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) t.fail(`${name}: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
}

mcpTest('update_document and update_broadcast that change nothing write nothing; a real change does', async (t, server) => {
  const { client, close } = await connect(server, { product: 'herald', tenant: 'acme', scopes: Object.keys(herald.scopes) });
  try {
    const document = await ok(t, client, 'herald.create_document', { title: 'Backup policy', category: 'policy', body: 'We back up daily.' });
    const broadcast = await ok(t, client, 'herald.create_broadcast', { title: 'Hello', body: 'News.', audience: 'customers' });
    await new Promise((resolve) => setTimeout(resolve, 20)); // a write now would show a later updated_at
    for (const args of [{}, { title: 'Backup policy' }, { title: 'Backup policy', category: 'policy', body: 'We back up daily.' }]) {
      const same = await ok(t, client, 'herald.update_document', { document_id: document.id, ...args });
      t.is(same.updated_at, document.updated_at, JSON.stringify(args));
    }
    for (const args of [{}, { audience: 'customers' }]) {
      const same = await ok(t, client, 'herald.update_broadcast', { broadcast_id: broadcast.id, ...args });
      t.is(same.updated_at, broadcast.updated_at, JSON.stringify(args));
    }
    const stored = await server.db('herald_documents').where({ id: document.id }).first();
    t.is(Number(stored.updated_at), Date.parse(document.updated_at));

    const renamed = await ok(t, client, 'herald.update_document', { document_id: document.id, title: 'Backup and restore policy', body: 'We back up daily.' });
    t.is(renamed.title, 'Backup and restore policy');
    t.true(Date.parse(renamed.updated_at) > Date.parse(document.updated_at));
  } finally {
    await close();
  }
});
