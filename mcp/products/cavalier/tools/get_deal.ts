import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.get_deal',
  title: 'Get a deal',
  description:
    'Returns one deal of your organization with its stage, value, expected close date and notes, plus summaries of the quotes and ' +
    'statements of work attached to it. Needs deal_id. Read-only.',
  scope: 'cavalier.deals.read',
  destructive: false,
  input: {
    deal_id: z.string().max(100).describe('The deal id.'),
  },
  async handler({ deal_id }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const deal = await repos.deals.get(deal_id);
    return { ...deal, uri: resourceUri('deals', deal.id) };
  },
});
