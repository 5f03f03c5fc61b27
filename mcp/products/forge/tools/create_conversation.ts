import { z } from 'zod';
import { forgeTool, conversationOut, messageOut } from '../wire.js';
import { nameArg } from '../../common.js';

export default forgeTool({
  name: 'forge.create_conversation',
  title: 'Create a conversation',
  description:
    'Starts a new AI chat conversation in the organization with the given title and, optionally, a first message written by the signed-in person. ' +
    'Returns the conversation (id, title, message_count, times, resource URI) and the first message if one was given. ' +
    'Does not generate an assistant reply.',
  scope: 'forge.chat.write',
  destructive: false,
  input: {
    title: nameArg(200).describe('Title of the conversation (1-200 characters).'),
    first_message: z.string().trim().min(1).max(20_000).optional().describe('Optional opening message from the user (up to 20,000 characters).'),
  },
  async handler(args, context) {
    const row = await context.repos.conversations.create({ title: args.title, createdBy: context.user.id });
    const first = args.first_message
      ? await context.repos.messages.add({ conversationId: row.id, role: 'user', content: args.first_message, authorId: context.user.id, at: row.created_at })
      : undefined;
    return { ...conversationOut(row, context, first ? 1 : 0), first_message: first ? messageOut(first) : null };
  },
});
