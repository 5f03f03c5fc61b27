import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { OPEN_DEAL_STAGES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.update_deal_stage',
  title: 'Move a deal to another stage',
  description:
    'Moves an open deal one step along lead → qualified → proposal. Skipping a stage or moving backwards is refused with code conflict ' +
    'naming the allowed next stages. Closing a deal as won or lost is final and is done with cavalier.close_deal, which asks for ' +
    'confirmation. Needs deal_id and stage; returns the deal with previous_stage. Does not change the deal\'s quotes or statements of work.',
  scope: 'cavalier.deals.write',
  destructive: false,
  input: {
    deal_id: z.string().max(100).describe('The deal id.'),
    stage: z.enum(OPEN_DEAL_STAGES).describe('The new stage (won and lost: cavalier.close_deal).'),
  },
  async handler({ deal_id, stage }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const deal = await repos.deals.setStage(deal_id, stage);
    return { ...deal, uri: resourceUri('deals', deal.id) };
  },
});
