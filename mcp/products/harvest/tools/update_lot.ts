import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { lotFields } from '../args.js';
import { OPEN_LOT_STATUSES, type HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.update_lot',
  title: 'Update a salvage lot',
  description:
    'Changes the given fields of an open salvage lot (fields left out stay as they are), including its status between available and ' +
    'reserved. A new currency needs estimated_value_minor restated in that currency in the same call (Portico converts no currencies; ' +
    'otherwise invalid_arguments). Selling or scrapping a lot is final and is done with harvest.close_lot, which asks for confirmation; ' +
    'sold and scrapped lots cannot be changed (conflict). Needs lot_id; returns the lot and the list of fields that changed. Does not ' +
    'notify buyers.',
  scope: 'harvest.lots.write',
  destructive: false,
  idempotent: true,
  input: {
    lot_id: z.string().max(100).describe('The lot id.'),
    item: lotFields.item.optional(),
    description: lotFields.description.optional(),
    condition: lotFields.condition.optional(),
    quantity: lotFields.quantity.optional(),
    currency: lotFields.currency.optional().describe('ISO 4217 currency code, upper case (e.g. EUR, JPY); a new one needs estimated_value_minor in that currency in the same call.'),
    estimated_value_minor: lotFields.estimated_value_minor.optional(),
    location: lotFields.location.optional(),
    status: z.enum(OPEN_LOT_STATUSES).optional().describe('The new status (sold and scrapped: harvest.close_lot).'),
  },
  async handler({ lot_id, ...patch }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const lot = await repos.lots.update(lot_id, patch);
    return { ...lot, uri: resourceUri('lots', lot.id) };
  },
});
