import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, pageArgs } from '../../common.js';
import { DEAL_STAGES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.list_deals',
  title: 'List deals',
  description:
    'Lists the deals of your organization, newest first: title, customer, stage (lead, qualified, proposal, won, lost), value in minor ' +
    'units and the stages each may move to. Optional filters: stage, customer (case-insensitive substring). Returns { deals, next_cursor }; ' +
    'pass next_cursor back as cursor for the next page. Read-only.',
  scope: 'cavalier.deals.read',
  destructive: false,
  input: {
    stage: z.enum(DEAL_STAGES).optional().describe('Only deals at this stage.'),
    customer: nameArg(200).optional().describe('Only deals whose customer name contains this text (case-insensitive).'),
    ...pageArgs,
  },
  async handler(args, { repos }: ToolContext<CavalierRepository>) {
    const page = await repos.deals.list(args);
    return { deals: page.items, next_cursor: page.next_cursor };
  },
});
