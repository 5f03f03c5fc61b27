import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { ENDPOINT_STATUSES, type MidasRepository } from '../repository.js';
import { nameArg } from '../../common.js';

export default defineTool({
  name: 'midas.update_endpoint',
  title: 'Update a public-API endpoint',
  description:
    "Changes a public-API endpoint's catalog entry: its summary, its status (active or deprecated) or its rate limit per minute; fields left out stay as they are. Returns the endpoint. " +
    'Deprecating marks the endpoint for API consumers; it does not switch it off or change its usage history.',
  scope: 'midas.api.write',
  destructive: false,
  idempotent: true,
  input: {
    endpoint_id: z.string().min(1).max(200).describe('Id of the endpoint.'),
    summary: nameArg(500).nullable().optional().describe('New one-line summary; null clears it.'),
    status: z.enum(ENDPOINT_STATUSES).optional().describe('active or deprecated.'),
    rate_limit_per_minute: z.number().int().min(1).max(100_000).optional().describe('Calls allowed per minute per API key (1-100000).'),
  },
  handler: async ({ endpoint_id, ...patch }, { repos, resourceUri }: ToolContext<MidasRepository>) => {
    const record = await repos.endpoints.update(endpoint_id, patch);
    return { ...record, uri: resourceUri('endpoints', record.id) };
  },
});
