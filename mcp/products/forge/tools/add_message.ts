import { z } from 'zod';
import { forgeTool, messageOut } from '../wire.js';

export default forgeTool({
  name: 'forge.add_message',
  title: 'Add a message',
  description:
    'Appends a message to an existing conversation of the organization and marks the conversation as active now. ' +
    'Needs the conversation id and the text; role is user (default) or assistant, for recording a reply an AI client produced. ' +
    'Returns the stored message with its id. Does not generate a reply and cannot edit or remove earlier messages.',
  scope: 'forge.chat.write',
  destructive: false,
  input: {
    conversation_id: z.string().min(1).max(200).describe('Id of the conversation to add to.'),
    content: z.string().trim().min(1).max(20_000).describe('Text of the message (up to 20,000 characters).'),
    role: z.enum(['user', 'assistant']).optional().describe('Who wrote it: user (default) or assistant.'),
  },
  async handler(args, context) {
    const conversation = await context.repos.conversations.require(args.conversation_id);
    const message = await context.repos.messages.add({
      conversationId: conversation.id, role: args.role ?? 'user', content: args.content, authorId: args.role === 'assistant' ? null : context.user.id,
    });
    await context.repos.conversations.touch(conversation.id);
    return messageOut(message);
  },
});
