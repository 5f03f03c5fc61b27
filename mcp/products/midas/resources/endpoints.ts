import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import { DAY_MS } from '../../common.js';
import type { MidasRepository } from '../repository.js';

export default defineResource({
  collection: 'endpoints',
  title: 'Public-API endpoint',
  description: 'One public-API endpoint with its daily usage over the last 30 days.',
  scope: 'midas.api.read',
  mimeType: 'application/json',
  read: async (id, { repos, resourceUri }: ToolContext<MidasRepository>) => {
    const endpoint = await repos.endpoints.get(id);
    const to = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const usage = await repos.usage.between({ from: to - 29 * DAY_MS, to, endpoint_id: endpoint.id });
    return { ...endpoint, usage: { totals: usage.totals, by_day: usage.by_day }, uri: resourceUri('endpoints', endpoint.id) };
  },
});
