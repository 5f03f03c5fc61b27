import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.delete_lot',
  title: 'Delete a salvage lot',
  description:
    'Permanently deletes a salvage lot record, whatever its status. Needs lot_id; destructive, so the first call returns ' +
    'confirmation_required and the deletion happens only when the same call is repeated with confirmed: true. Returns what was deleted. ' +
    'Deletes only the record in Portico, not the goods or any sale.',
  scope: 'harvest.lots.write',
  destructive: true,
  confirmation: 'Salvage lot {lot_id} will be permanently deleted, with its valuation and history.',
  input: {
    lot_id: z.string().max(100).describe('The lot id.'),
  },
  async handler({ lot_id }, { repos }: ToolContext<HarvestRepository>) {
    return repos.lots.delete(lot_id);
  },
});
