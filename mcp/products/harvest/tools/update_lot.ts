import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { lotFields } from '../args.js';
import { LOT_STATUSES, type HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.update_lot',
  title: 'Update a salvage lot',
  description:
    'Changes the given fields of a salvage lot (fields left out stay as they are), including its status: available → reserved, sold or ' +
    'scrapped; reserved → available or sold. Sold and scrapped lots are final and cannot be changed; other moves are refused with code ' +
    'conflict. Needs lot_id; returns the lot and the list of fields that changed. Does not notify buyers.',
  scope: 'harvest.lots.write',
  destructive: false,
  idempotent: true,
  input: {
    lot_id: z.string().max(100).describe('The lot id.'),
    item: lotFields.item.optional(),
    description: lotFields.description.optional(),
    condition: lotFields.condition.optional(),
    quantity: lotFields.quantity.optional(),
    currency: lotFields.currency.optional(),
    estimated_value_minor: lotFields.estimated_value_minor.optional(),
    location: lotFields.location.optional(),
    status: z.enum(LOT_STATUSES).optional().describe('The new status.'),
  },
  async handler({ lot_id, ...patch }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const lot = await repos.lots.update(lot_id, patch);
    return { ...lot, uri: resourceUri('lots', lot.id) };
  },
});
