/**
 * A surface change reaches an instance up to twice: its own poll of the surfaces table may read
 * the change before the NOTIFY (or events file) of the command that made it arrives. Sessions are
 * told once per move, not once per message: a client told twice lists every list twice for
 * nothing, and the CI run that found this counted two announcements of one ship.
 */
import { setSurfaceStatus } from '../../../db/surfaces.js';
import type { ProductStatus } from '../../../shared/catalog.js';
import { connectCountingChanges, grant, mcpTest, type McpTestServer } from '../../helpers/mcp.js';
import { until } from '../../helpers/poll.js';

/** Whether `condition` came true within 10 s. */
const waitFor = (condition: () => boolean) => until(10_000, async () => condition() || undefined, 20).then(Boolean);

/** The change as another process makes it: the row first, then the message, here heard twice. */
async function change(server: McpTestServer, status: ProductStatus, heard: number): Promise<void> {
  await setSurfaceStatus(server.db, 'midas', status);
  for (let i = 0; i < heard; i += 1) server.events.deliver({ type: 'surface.changed', product: 'midas', status });
}

mcpTest('a surface change heard twice (poll and notification) is announced to each session once', async (t, server) => {
  const { token } = await grant(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  const { client, told, streaming } = await connectCountingChanges(`${server.mcpUrl}/midas`, token);
  try {
    await streaming;
    await change(server, 'live', 2);
    t.true(await waitFor(() => told.tools >= 1 && told.prompts >= 1 && told.resources >= 1), JSON.stringify(told));
    t.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['midas.usage_report']);

    // The next move is announced on the same stream after anything the first one sent: a second
    // announcement of the ship would take the count to 2 early and the unship to 3.
    await change(server, 'roadmap', 1);
    t.true(await waitFor(() => told.tools >= 2 && told.prompts >= 2 && told.resources >= 2), JSON.stringify(told));
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.deepEqual(told, { tools: 2, prompts: 2, resources: 2 }, 'one announcement of each list per move');
    t.deepEqual((await client.listPrompts()).prompts, []);
  } finally {
    await client.close();
  }
});
