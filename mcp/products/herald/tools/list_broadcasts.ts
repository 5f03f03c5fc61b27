import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { AUDIENCES, BROADCAST_STATUSES, type HeraldRepository } from '../repository.js';

const input = {
  status: z.enum(BROADCAST_STATUSES).optional().describe('Only broadcasts in this state: draft, scheduled or sent.'),
  audience: z.enum(AUDIENCES).optional().describe('Only broadcasts addressed to this audience.'),
  ...pageArgs,
};

export default defineTool({
  name: 'herald.list_broadcasts',
  title: 'List broadcasts',
  description:
    "Lists the organization's broadcasts, newest first, optionally filtered by status (draft, scheduled, sent) and audience. " +
    'Returns { broadcasts: [{ id, title, body, audience, status, scheduled_for, sent_at, recipients_count, ... }], next_cursor }; pass next_cursor back as cursor for the next page. Read-only.',
  scope: 'herald.broadcasts.read',
  destructive: false,
  input,
  handler: async (args, { repos }: ToolContext<HeraldRepository>) => {
    const page = await repos.broadcasts.list(args);
    return { broadcasts: page.items, next_cursor: page.next_cursor };
  },
});
