import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { SEGMENTS, type HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.list_subscribers',
  title: 'List subscribers',
  description:
    "Lists the people who receive the organization's broadcasts, newest subscription first, optionally one segment (customers, partners, internal). " +
    'Unsubscribed people are left out unless include_unsubscribed is true. Returns { subscribers: [{ id, email, name, segment, subscribed_at, unsubscribed_at }], next_cursor }. Read-only.',
  scope: 'herald.broadcasts.read',
  destructive: false,
  input: {
    segment: z.enum(SEGMENTS).optional().describe('Only this segment.'),
    include_unsubscribed: z.boolean().default(false).describe('Also list people who unsubscribed.'),
    ...pageArgs,
  },
  handler: async (args, { repos }: ToolContext<HeraldRepository>) => {
    const page = await repos.subscribers.list(args);
    return { subscribers: page.items, next_cursor: page.next_cursor };
  },
});
