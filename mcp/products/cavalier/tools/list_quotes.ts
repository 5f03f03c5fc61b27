import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, pageArgs } from '../../common.js';
import { QUOTE_STATUSES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.list_quotes',
  title: 'List quotes',
  description:
    'Lists the quotes of your organization, newest first, with customer, status, currency and computed totals (no line items; use ' +
    'cavalier.get_quote for those). Optional filters: status (draft, sent, accepted, rejected), deal_id, and customer (case-insensitive ' +
    'substring). Returns { quotes, next_cursor }; pass next_cursor back as cursor for the next page. Read-only.',
  scope: 'cavalier.quotes.read',
  destructive: false,
  input: {
    status: z.enum(QUOTE_STATUSES).optional().describe('Only quotes in this status.'),
    deal_id: z.string().max(100).optional().describe('Only quotes attached to this deal.'),
    customer: nameArg(200).optional().describe('Only quotes whose customer name contains this text (case-insensitive).'),
    ...pageArgs,
  },
  async handler(args, { repos }: ToolContext<CavalierRepository>) {
    const page = await repos.quotes.list(args);
    return { quotes: page.items, next_cursor: page.next_cursor };
  },
});
