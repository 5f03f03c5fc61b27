import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.get_lot',
  title: 'Get a salvage lot',
  description: 'Returns one salvage lot of your organization with all its fields and the statuses it may move to next. Needs lot_id. Read-only.',
  scope: 'harvest.lots.read',
  destructive: false,
  input: {
    lot_id: z.string().max(100).describe('The lot id.'),
  },
  async handler({ lot_id }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const lot = await repos.lots.get(lot_id);
    return { ...lot, uri: resourceUri('lots', lot.id) };
  },
});
