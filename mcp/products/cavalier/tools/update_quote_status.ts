import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { OPEN_QUOTE_STATUSES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.update_quote_status',
  title: 'Change a quote\'s status',
  description:
    'Marks a draft quote as sent, recording when. Any other move (e.g. back to draft) is refused with code conflict naming the allowed ' +
    'next statuses, and so is sending a quote whose deal was lost. The customer\'s answer, accepted or rejected, is final and is recorded with cavalier.record_quote_decision, which asks ' +
    'for confirmation. Needs quote_id and the new status; returns the updated quote with previous_status. Only records the status: it ' +
    'does not e-mail or otherwise deliver the quote to the customer.',
  scope: 'cavalier.quotes.write',
  destructive: false,
  input: {
    quote_id: z.string().max(100).describe('The quote id.'),
    status: z.enum(OPEN_QUOTE_STATUSES).describe('The new status (accepted and rejected: cavalier.record_quote_decision).'),
  },
  async handler({ quote_id, status }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const quote = await repos.quotes.setStatus(quote_id, status);
    return { ...quote, uri: resourceUri('quotes', quote.id) };
  },
});
