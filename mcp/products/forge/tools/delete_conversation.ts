import { z } from 'zod';
import { AppError } from '../../../../shared/errors.js';
import { forgeTool } from '../wire.js';

export default forgeTool({
  name: 'forge.delete_conversation',
  title: 'Delete a conversation',
  description:
    'Permanently deletes one conversation of the organization together with all of its messages; this cannot be undone. ' +
    'The first call only asks for confirmation (code confirmation_required); repeat the same call with confirmed: true to delete. ' +
    'Returns the deleted id and how many messages went with it.',
  scope: 'forge.chat.write',
  destructive: true,
  confirmation: 'Permanently delete the conversation {conversation_id} and all of its messages.',
  input: {
    conversation_id: z.string().min(1).max(200).describe('Id of the conversation to delete.'),
  },
  async handler(args, context) {
    const conversation = await context.repos.conversations.require(args.conversation_id);
    const messages = await context.repos.conversations.delete(conversation.id);
    if (messages === undefined) throw new AppError('not_found', `no conversation with id ${conversation.id}`);
    return { id: conversation.id, title: conversation.title, deleted: true, messages_deleted: messages };
  },
});
