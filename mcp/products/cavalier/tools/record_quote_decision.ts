import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { QUOTE_DECISIONS, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.record_quote_decision',
  title: 'Record the customer\'s decision on a quote',
  description:
    'Records that the customer accepted or rejected a sent quote, and when. The decision is final: the quote can never change status ' +
    'again, and an accepted quote can no longer be deleted. So this is destructive: the first call returns confirmation_required and ' +
    'the decision is recorded only when the same call is repeated with confirmed: true. A quote that is not sent is refused with code ' +
    'conflict, and so is accepting one past its valid_until or one whose deal was lost (either can still be rejected). Needs quote_id and decision; returns the quote ' +
    'with previous_status. Only records the decision: it contacts no one.',
  scope: 'cavalier.quotes.write',
  destructive: true,
  confirmation: 'Quote {quote_id} will be recorded as {decision} by the customer, which is final: its status can never change again, and an accepted quote can no longer be deleted.',
  input: {
    quote_id: z.string().max(100).describe('The quote id.'),
    decision: z.enum(QUOTE_DECISIONS).describe('accepted or rejected.'),
  },
  check: ({ quote_id, decision }, { repos }: ToolContext<CavalierRepository>) => repos.quotes.checkStatus(quote_id, decision),
  async handler({ quote_id, decision }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const quote = await repos.quotes.setStatus(quote_id, decision);
    return { ...quote, uri: resourceUri('quotes', quote.id) };
  },
});
