import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { DAY_MS } from '../../common.js';
import { type MidasRepository } from '../repository.js';

export default defineTool({
  name: 'midas.get_endpoint',
  title: 'Get a public-API endpoint',
  description:
    'Returns one public-API endpoint (method, path, summary, status, rate limit) with its usage totals over the last 30 UTC days including today: calls, errors, error_rate and the worst daily p95 latency. Read-only.',
  scope: 'midas.api.read',
  destructive: false,
  input: { endpoint_id: z.string().min(1).max(200).describe('Id of the endpoint.') },
  handler: async ({ endpoint_id }, { repos, resourceUri }: ToolContext<MidasRepository>) => {
    const endpoint = await repos.endpoints.get(endpoint_id);
    const to = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const usage = await repos.usage.between({ from: to - 29 * DAY_MS, to, endpoint_id: endpoint.id });
    const own = usage.by_endpoint[0];
    return { ...endpoint, last_30_days: { ...usage.totals, worst_p95_ms: own?.worst_p95_ms ?? null }, uri: resourceUri('endpoints', endpoint.id) };
  },
});
