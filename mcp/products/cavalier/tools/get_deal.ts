import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dealAsGranted } from '../granted.js';
import { DEAL_RECORDS_SHOWN, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.get_deal',
  title: 'Get a deal',
  description:
    'Returns one deal of your organization with its stage, value, expected close date and notes, plus summaries of the quotes ' +
    '(for connections that may read quotes, cavalier.quotes.read) and statements of work (cavalier.sows.read) attached to it: ' +
    `the newest ${DEAL_RECORDS_SHOWN} of each, with quotes_total and sows_total counting all of them and quotes_truncated and sows_truncated ` +
    'true when some are left out (cavalier.list_quotes and cavalier.list_sows with deal_id page through all). Needs deal_id. Read-only.',
  scope: 'cavalier.deals.read',
  destructive: false,
  input: {
    deal_id: z.string().max(100).describe('The deal id.'),
  },
  async handler({ deal_id }, context: ToolContext<CavalierRepository>) {
    const deal = await context.repos.deals.get(deal_id);
    return { ...dealAsGranted(context, deal), uri: context.resourceUri('deals', deal.id) };
  },
});
