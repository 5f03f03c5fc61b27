import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, pageArgs } from '../../common.js';
import { CONDITIONS, LOT_STATUSES, type HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.list_lots',
  title: 'List salvage lots',
  description:
    'Lists the salvage lots of your organization, newest first: item, condition, quantity, estimated value (minor units and formatted), ' +
    'location and status. Optional filters: status (available, reserved, sold, scrapped), condition, item (case-insensitive substring). ' +
    'Returns { lots, next_cursor }. Read-only.',
  scope: 'harvest.lots.read',
  destructive: false,
  input: {
    status: z.enum(LOT_STATUSES).optional().describe('Only lots in this status.'),
    condition: z.enum(CONDITIONS).optional().describe('Only lots in this condition.'),
    item: nameArg(200).optional().describe('Only lots whose item contains this text (case-insensitive).'),
    ...pageArgs,
  },
  async handler(args, { repos }: ToolContext<HarvestRepository>) {
    const page = await repos.lots.list(args);
    return { lots: page.items, next_cursor: page.next_cursor };
  },
});
