import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { DEAL_OUTCOMES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.close_deal',
  title: 'Close a deal as won or lost',
  description:
    'Closes a deal for good: outcome won (only from stage proposal) or lost (from any open stage); any other move is refused with code ' +
    'conflict naming the allowed next stages. A closed deal can never be reopened or moved again, so this is destructive: the first call ' +
    'returns confirmation_required and the deal closes only when the same call is repeated with confirmed: true. Needs deal_id and ' +
    'outcome; returns the deal with previous_stage and closed_at. Does not change its quotes or statements of work and notifies no one.',
  scope: 'cavalier.deals.write',
  destructive: true,
  confirmation: 'Deal {deal_id} will be closed as {outcome}, which is final: it can never be reopened or moved to another stage.',
  input: {
    deal_id: z.string().max(100).describe('The deal id.'),
    outcome: z.enum(DEAL_OUTCOMES).describe('won or lost.'),
  },
  check: ({ deal_id, outcome }, { repos }: ToolContext<CavalierRepository>) => repos.deals.checkStage(deal_id, outcome),
  async handler({ deal_id, outcome }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const deal = await repos.deals.setStage(deal_id, outcome);
    return { ...deal, uri: resourceUri('deals', deal.id) };
  },
});
