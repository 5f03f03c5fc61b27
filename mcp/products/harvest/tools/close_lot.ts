import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { LOT_OUTCOMES, type HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.close_lot',
  title: 'Mark a salvage lot sold or scrapped',
  description:
    'Records the end of a salvage lot: outcome sold (from available or reserved) or scrapped (from available only; a reserved lot is ' +
    'released first with harvest.update_lot). Sold and scrapped are final: the lot can never be edited, reserved or made available ' +
    'again, so this is destructive: the first call returns confirmation_required and the lot is closed only when the same call is ' +
    'repeated with confirmed: true. Other moves are refused with code conflict. Needs lot_id and outcome; returns the lot with ' +
    'previous_status. Only records the outcome: it sells, moves or disposes of nothing.',
  scope: 'harvest.lots.write',
  destructive: true,
  confirmation: 'Salvage lot {lot_id} will be marked {outcome}, which is final: it can never be edited, reserved or made available again.',
  input: {
    lot_id: z.string().max(100).describe('The lot id.'),
    outcome: z.enum(LOT_OUTCOMES).describe('sold or scrapped.'),
  },
  check: ({ lot_id, outcome }, { repos }: ToolContext<HarvestRepository>) => repos.lots.checkClose(lot_id, outcome),
  async handler({ lot_id, outcome }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const lot = await repos.lots.close(lot_id, outcome);
    return { ...lot, uri: resourceUri('lots', lot.id) };
  },
});
