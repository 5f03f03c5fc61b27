/**
 * A surface change reaches an instance up to twice: its own poll of the surfaces table may read
 * the change before the NOTIFY (or events file) of the command that made it arrives. Sessions are
 * told once per move, not once per message: a client told twice lists every list twice for
 * nothing, and the CI run that found this counted two announcements of one ship.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { setSurfaceStatus } from '../../db/surfaces.js';
import type { ProductStatus } from '../../shared/catalog.js';
import { grant, mcpTest, type McpTestServer } from '../helpers/mcp.js';

async function waitFor(condition: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** The change as another process makes it: the row first, then the message, here heard twice. */
async function change(server: McpTestServer, status: ProductStatus, heard: number): Promise<void> {
  await setSurfaceStatus(server.db, 'midas', status);
  for (let i = 0; i < heard; i += 1) server.events.deliver({ type: 'surface.changed', product: 'midas', status });
}

mcpTest('a surface change heard twice (poll and notification) is announced to each session once', async (t, server) => {
  const { token } = await grant(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  const told = { tools: 0, prompts: 0, resources: 0 };
  const client = new Client({ name: 'portico-test', version: '1.0.0' });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (told.tools += 1));
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void (told.prompts += 1));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void (told.resources += 1));
  let streamUp!: () => void;
  const streaming = new Promise<void>((resolve) => (streamUp = resolve));
  const seeingStream: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    if (init?.method === 'GET' && response.ok) streamUp();
    return response;
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.mcpUrl}/midas`), { fetch: seeingStream, requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
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
