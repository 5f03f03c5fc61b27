import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { QUOTE_STATUSES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.update_quote_status',
  title: 'Change a quote\'s status',
  description:
    'Moves a quote along its lifecycle: draft → sent → accepted or rejected. Any other move (e.g. draft → accepted, or anything out of ' +
    'accepted or rejected, which are final) is refused with code conflict naming the allowed next statuses. Records when the quote was ' +
    'sent or decided. Needs quote_id and the new status; returns the updated quote with previous_status. Only records the status: it does ' +
    'not e-mail or otherwise deliver the quote to the customer.',
  scope: 'cavalier.quotes.write',
  destructive: false,
  input: {
    quote_id: z.string().max(100).describe('The quote id.'),
    status: z.enum(QUOTE_STATUSES).describe('The new status.'),
  },
  async handler({ quote_id, status }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const quote = await repos.quotes.setStatus(quote_id, status);
    return { ...quote, uri: resourceUri('quotes', quote.id) };
  },
});
