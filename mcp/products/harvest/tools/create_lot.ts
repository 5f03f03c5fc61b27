import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { lotFields } from '../args.js';
import type { HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.create_lot',
  title: 'Record a salvage lot',
  description:
    'Records a new salvage lot in status available: item, condition (new, like_new, good, fair, poor, scrap), quantity and the estimated ' +
    'value of the whole lot as an integer in the minor unit of an ISO 4217 currency; description and location are optional. Returns the ' +
    'lot. Does not list it for sale anywhere outside Portico.',
  scope: 'harvest.lots.write',
  destructive: false,
  input: {
    item: lotFields.item,
    condition: lotFields.condition,
    quantity: lotFields.quantity,
    currency: lotFields.currency,
    estimated_value_minor: lotFields.estimated_value_minor,
    description: lotFields.description.optional(),
    location: lotFields.location.optional(),
  },
  async handler(args, { repos, user, resourceUri }: ToolContext<HarvestRepository>) {
    const lot = await repos.lots.create({ ...args, created_by: user.id });
    return { ...lot, uri: resourceUri('lots', lot.id) };
  },
});
