import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.get_quote',
  title: 'Get a quote',
  description:
    'Returns one quote of your organization with its line items (description, quantity, unit price, amount), subtotal, tax and total in ' +
    'integer minor units of its currency, its status and the statuses it may move to next. Needs quote_id. Read-only.',
  scope: 'cavalier.quotes.read',
  destructive: false,
  input: {
    quote_id: z.string().max(100).describe('The quote id.'),
  },
  async handler({ quote_id }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const quote = await repos.quotes.get(quote_id);
    return { ...quote, uri: resourceUri('quotes', quote.id) };
  },
});
