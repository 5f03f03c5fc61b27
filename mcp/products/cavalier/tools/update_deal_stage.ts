import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { DEAL_STAGES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.update_deal_stage',
  title: 'Move a deal to another stage',
  description:
    'Moves a deal one step along lead → qualified → proposal → won, or to lost from any open stage. Skipping a stage, moving backwards ' +
    'or leaving won or lost (final) is refused with code conflict naming the allowed next stages. Needs deal_id and stage; returns the ' +
    'deal with previous_stage. Does not change the deal\'s quotes or statements of work.',
  scope: 'cavalier.deals.write',
  destructive: false,
  input: {
    deal_id: z.string().max(100).describe('The deal id.'),
    stage: z.enum(DEAL_STAGES).describe('The new stage.'),
  },
  async handler({ deal_id, stage }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const deal = await repos.deals.setStage(deal_id, stage);
    return { ...deal, uri: resourceUri('deals', deal.id) };
  },
});
