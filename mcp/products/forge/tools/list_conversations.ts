import { z } from 'zod';
import { forgeTool, conversationOut } from '../wire.js';

export default forgeTool({
  name: 'forge.list_conversations',
  title: 'List conversations',
  description:
    "Lists the organization's AI chat conversations, newest created first, 25 per page by default. " +
    'The order is by creation time, so a conversation that gets a message while a client pages keeps its place: paging neither skips nor repeats one. ' +
    'Returns for each one its id, title, number of messages, creation and last-activity times and its resource URI, plus next_cursor for the following page (null on the last). ' +
    'Does not return message text; use forge.get_conversation for that.',
  scope: 'forge.chat.read',
  destructive: false,
  input: {
    limit: z.number().int().min(1).max(100).optional().describe('How many conversations to return (1-100, default 25).'),
    cursor: z.string().min(1).max(200).optional().describe('next_cursor from the previous page, to continue the listing.'),
  },
  async handler(args, context) {
    const page = await context.repos.conversations.list({ limit: args.limit ?? 25, cursor: args.cursor });
    return { conversations: page.items.map((row) => conversationOut(row, context, Number(row.message_count))), next_cursor: page.next_cursor };
  },
});
