import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.delete_quote',
  title: 'Delete a quote',
  description:
    'Permanently deletes a quote and its line items. Accepted quotes are kept as commercial records and are refused with code conflict; ' +
    'draft, sent and rejected quotes can be deleted. Needs quote_id; destructive, so the first call returns confirmation_required and ' +
    'the deletion happens only when the same call is repeated with confirmed: true. Returns what was deleted. Does not notify the customer.',
  scope: 'cavalier.quotes.write',
  destructive: true,
  confirmation: 'Quote {quote_id} and all of its line items will be permanently deleted.',
  input: {
    quote_id: z.string().max(100).describe('The quote id.'),
  },
  check: ({ quote_id }, { repos }: ToolContext<CavalierRepository>) => repos.quotes.checkDelete(quote_id),
  async handler({ quote_id }, { repos }: ToolContext<CavalierRepository>) {
    return repos.quotes.delete(quote_id);
  },
});
