import { z } from 'zod';
import { forgeTool, fullConversation } from '../wire.js';

export default forgeTool({
  name: 'forge.get_conversation',
  title: 'Get a conversation',
  description:
    'Returns one AI chat conversation of the organization by its id: title, times, resource URI and its newest messages, oldest first ' +
    '(role user, assistant or system; at most message_limit of them, default 100, with messages_truncated telling whether older ones exist). ' +
    'Fails with not_found for an unknown id. Read-only.',
  scope: 'forge.chat.read',
  destructive: false,
  input: {
    conversation_id: z.string().min(1).max(200).describe('Id of the conversation (as returned by forge.list_conversations).'),
    message_limit: z.number().int().min(1).max(500).optional().describe('Most messages to include (1-500, default 100).'),
  },
  async handler(args, context) {
    return fullConversation(context, args.conversation_id, args.message_limit ?? 100);
  },
});
