import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { SOW_STATUSES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.list_sows',
  title: 'List statements of work',
  description:
    'Lists the statements of work of your organization, newest first: title, deal, status (draft, signed, completed), currency and ' +
    'total of the milestones (no milestones; use cavalier.get_sow). Optional filters: deal_id, status. Returns { sows, next_cursor }. Read-only.',
  scope: 'cavalier.sows.read',
  destructive: false,
  input: {
    deal_id: z.string().max(100).optional().describe('Only statements of work of this deal.'),
    status: z.enum(SOW_STATUSES).optional().describe('Only statements of work in this status.'),
    ...pageArgs,
  },
  async handler(args, { repos }: ToolContext<CavalierRepository>) {
    const page = await repos.sows.list(args);
    return { sows: page.items, next_cursor: page.next_cursor };
  },
});
