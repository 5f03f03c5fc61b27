/**
 * Day counts and ranges outside what midas documents are refused naming the argument the caller
 * gave, not quietly changed: the usage report's `days` is 1-366, and a get_usage range given by
 * `from` alone that is too long or in the future names `from`.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { setSurfaceStatus } from '../../../db/surfaces.js';
import { connect, mcpTest, type McpTestServer } from '../../helpers/mcp.js';

async function ship(server: McpTestServer): Promise<void> {
  await setSurfaceStatus(server.db, 'midas', 'live');
  await server.events.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
}

const codeAndField = (error: unknown) => ({ code: (error as { data?: { code?: string } }).data?.code, field: (error as { data?: { field?: string } }).data?.field });

mcpTest('midas.usage_report refuses a number of days outside 1-366, naming days', async (t, server) => {
  await ship(server);
  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  try {
    for (const days of ['0', '367', '999']) {
      const outcome = await client.getPrompt({ name: 'midas.usage_report', arguments: { days } }).then(
        (prompt) => ({ code: 'ok', field: undefined, text: JSON.stringify(prompt.messages).slice(0, 200) }),
        (error: McpError) => codeAndField(error),
      );
      t.deepEqual(outcome, { code: 'invalid_arguments', field: 'days' }, `days ${days}`);
    }
    const week = await client.getPrompt({ name: 'midas.usage_report', arguments: { days: '366' } });
    t.regex(JSON.stringify(week.messages), /\(366 days\)/);
  } finally {
    await close();
  }
});

mcpTest('midas.get_usage names from when from alone makes the range too long or starts after today', async (t, server) => {
  await ship(server);
  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  try {
    const year = new Date().getUTCFullYear();
    for (const from of [`${year - 3}-01-01`, `${year + 1}-01-01`]) {
      const outcome = await client.callTool({ name: 'midas.get_usage', arguments: { from } }).then(
        (result) => ({ code: result.isError ? (result.structuredContent as any)?.code : 'ok', field: undefined }),
        (error: McpError) => codeAndField(error),
      );
      t.deepEqual(outcome, { code: 'invalid_arguments', field: 'from' }, `from ${from}`);
    }
  } finally {
    await close();
  }
});
