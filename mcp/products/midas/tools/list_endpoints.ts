import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { ENDPOINT_STATUSES, METHODS, type MidasRepository } from '../repository.js';

export default defineTool({
  name: 'midas.list_endpoints',
  title: 'List public-API endpoints',
  description:
    "Lists the organization's public-API endpoints, newest first, optionally by status (active, deprecated) and HTTP method. " +
    'Returns { endpoints: [{ id, method, path, summary, status, rate_limit_per_minute, created_at, updated_at }], next_cursor }. Usage numbers come from midas.get_usage. Read-only.',
  scope: 'midas.api.read',
  destructive: false,
  input: {
    status: z.enum(ENDPOINT_STATUSES).optional().describe('Only active or only deprecated endpoints.'),
    method: z.enum(METHODS).optional().describe('Only this HTTP method.'),
    ...pageArgs,
  },
  handler: async (args, { repos }: ToolContext<MidasRepository>) => {
    const page = await repos.endpoints.list(args);
    return { endpoints: page.items, next_cursor: page.next_cursor };
  },
});
