/** forge: AI chat, content and document analysis (SPEC.md part 1.5). */
import { z } from 'zod';
import { defineProduct, definePrompt, defineResource } from '../../../shared/catalog.js';
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { forgeRepositories, type ForgeRepositories } from './repository.js';
import { documentOut, fullConversation } from './wire.js';
import addMessage from './tools/add_message.js';
import analyzeDocument from './tools/analyze_document.js';
import createContent from './tools/create_content.js';
import createConversation from './tools/create_conversation.js';
import deleteConversation from './tools/delete_conversation.js';
import getConversation from './tools/get_conversation.js';
import listContent from './tools/list_content.js';
import listConversations from './tools/list_conversations.js';
import uploadDocument from './tools/upload_document.js';

const conversationResource = defineResource<ForgeRepositories>({
  collection: 'conversations',
  title: 'Conversation',
  description: 'One AI chat conversation with all its messages (up to 500), as JSON.',
  scope: 'forge.chat.read',
  mimeType: 'application/json',
  read: (id, context) => fullConversation(context, id),
});

const documentResource = defineResource<ForgeRepositories>({
  collection: 'documents',
  title: 'Document',
  description: 'One stored document: its metadata and full text, as JSON.',
  scope: 'forge.documents.read',
  mimeType: 'application/json',
  async read(id, context) {
    const row = await context.repos.documents.require(id);
    return { ...documentOut(row, context), text: row.text };
  },
});

const summarizeArgs = {
  conversation_id: z.string().min(1).max(200).describe('Id of the conversation to summarize.'),
};

const summarizeConversation = definePrompt<typeof summarizeArgs, ForgeRepositories>({
  name: 'forge.summarize_conversation',
  title: 'Summarize a conversation',
  description: 'Asks the model for a short summary of one conversation (decisions, open questions, next steps); the conversation is embedded in the prompt.',
  scope: 'forge.chat.read',
  args: summarizeArgs,
  async get(args, context) {
    const conversation = await fullConversation(context, args.conversation_id);
    return [
      {
        role: 'user',
        content: {
          type: 'text',
          text: `Summarize the conversation "${conversation.title}" below in at most five sentences. ` +
            'Then list, as short bullet points, the decisions made, the open questions and the next steps. Quote nothing that is not in it.',
        },
      },
      { role: 'user', content: { type: 'resource', resource: { uri: conversation.uri, mimeType: 'application/json', text: JSON.stringify(conversation) } } },
    ];
  },
});

const seedDemo: DemoSeeder = async (trx, tenant, users) => {
  const repos = forgeRepositories(new TenantScope(trx, tenant.id));
  const author = users[`admin@${tenant.slug}.example`] ?? Object.values(users)[0];
  const name = tenant.name;
  const base = Date.now() - 3 * 86_400_000;
  const conversation = await repos.conversations.create({ title: `${name}: Q4 launch plan`, createdBy: author });
  const lines: Array<['user' | 'assistant', string]> = [
    ['user', 'We need a launch checklist for the Q4 release. The date is 2026-12-01.'],
    ['assistant', 'Here is a draft: freeze features by 2026-11-15, finish the security review, update the docs, brief support, then announce.'],
    ['user', 'Add a rollback plan and ask ops@example.com to confirm the maintenance window.'],
  ];
  for (const [i, [role, content]] of lines.entries()) {
    await repos.messages.add({ conversationId: conversation.id, role, content, authorId: role === 'user' ? author : null, at: base + i * 60_000 });
  }
  await repos.conversations.create({ title: `${name}: onboarding questions`, createdBy: author });
  await repos.content.create({
    kind: 'blog_post', title: `${name} ships faster releases`, status: 'draft', created_by: author,
    body: 'We moved to weekly releases. This post explains why, and what it means for our customers.',
  });
  await repos.documents.create({
    title: 'Release policy', mediaType: 'text/markdown', createdBy: author,
    text: `# Release policy\n\n${name} releases every week. Questions go to release@example.com.\n\n## Rollback\n\nEvery release has a rollback plan, reviewed by 2026-11-30. See https://example.com/runbook for details.\n`,
  });
};

export const forge = defineProduct<ForgeRepositories>({
  id: 'forge',
  title: 'Forge',
  kind: 'AI chat, content, document analysis',
  status: 'live',
  scopes: {
    'forge.chat.read': 'Read your organization’s AI chat conversations and their messages',
    'forge.chat.write': 'Start conversations, add messages and delete conversations',
    'forge.content.read': 'Read the content library (articles, posts, e-mails, notes)',
    'forge.content.write': 'Save new items to the content library',
    'forge.documents.read': 'Read and analyse stored documents',
    'forge.documents.write': 'Upload new documents',
  },
  tools: [
    listConversations, getConversation, createConversation, addMessage, deleteConversation,
    createContent, listContent, uploadDocument, analyzeDocument,
  ],
  resources: [conversationResource, documentResource],
  prompts: [summarizeConversation],
  entities: {
    conversation: 'forge_conversations',
    document: 'forge_documents',
  },
  seedDemo,
  repositories: forgeRepositories,
});
