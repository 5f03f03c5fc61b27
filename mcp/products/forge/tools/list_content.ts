import { z } from 'zod';
import { forgeTool, contentOut } from '../wire.js';
import { CONTENT_KINDS } from './create_content.js';

export default forgeTool({
  name: 'forge.list_content',
  title: 'List content',
  description:
    "Lists items of the organization's content library, newest first, optionally only one kind or status, 25 per page by default. " +
    'Returns each item with id, kind, title, body, status and creation time, plus next_cursor for the following page (null on the last). Read-only.',
  scope: 'forge.content.read',
  destructive: false,
  input: {
    kind: z.enum(CONTENT_KINDS).optional().describe('Only this kind of content.'),
    status: z.enum(['draft', 'published']).optional().describe('Only drafts or only published items.'),
    limit: z.number().int().min(1).max(100).optional().describe('How many items to return (1-100, default 25).'),
    cursor: z.string().min(1).max(200).optional().describe('next_cursor from the previous page, to continue the listing.'),
  },
  async handler(args, context) {
    const page = await context.repos.content.list({ limit: args.limit ?? 25, cursor: args.cursor, kind: args.kind, status: args.status });
    return { content: page.items.map(contentOut), next_cursor: page.next_cursor };
  },
});
