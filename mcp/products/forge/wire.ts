/** How forge records leave the server: snake_case, `id` on the object, ISO 8601 UTC times. */
import type { z } from 'zod';
import { defineTool, type ToolContext, type ToolDefinition } from '../../../shared/catalog.js';
import { isoOf } from '../common.js';
import type { DbContentRow, DbConversationRow, DbDocumentRow, DbMessageRow, ForgeRepositories } from './repository.js';

export type ForgeContext = ToolContext<ForgeRepositories>;

const iso = (ms: number) => isoOf(Number(ms));

export function conversationOut(row: DbConversationRow, context: ForgeContext, messageCount: number) {
  return {
    id: row.id, title: row.title, message_count: messageCount, created_by: row.created_by,
    created_at: iso(row.created_at), updated_at: iso(row.updated_at), uri: context.resourceUri('conversations', row.id),
  };
}

export function messageOut(row: DbMessageRow) {
  return { id: row.id, conversation_id: row.conversation_id, role: row.role, content: row.content, author_id: row.author_id, created_at: iso(row.created_at) };
}

export function contentOut(row: DbContentRow) {
  return { id: row.id, kind: row.kind, title: row.title, body: row.body, status: row.status, created_by: row.created_by, created_at: iso(row.created_at) };
}

export function documentOut(row: DbDocumentRow, context: ForgeContext) {
  return {
    id: row.id, title: row.title, media_type: row.media_type, size_bytes: row.size_bytes, created_by: row.created_by,
    created_at: iso(row.created_at), uri: context.resourceUri('documents', row.id),
  };
}

/** The conversation with its newest `messageLimit` messages, oldest first (get_conversation, the resource, the prompt). */
export async function fullConversation(context: ForgeContext, conversationId: string, messageLimit = 500) {
  const row = await context.repos.conversations.require(conversationId);
  // The newest messages, shown oldest first: a message just added is always among them, and what
  // a long conversation leaves out is its beginning (as a scan's findings keep the newest).
  const newest = await context.repos.messages.newest(row.id, messageLimit + 1);
  const truncated = newest.length > messageLimit;
  const total = truncated ? await context.repos.conversations.messageCount(row.id) : newest.length;
  return {
    ...conversationOut(row, context, total),
    messages: newest.slice(0, messageLimit).reverse().map(messageOut),
    messages_truncated: truncated,
  };
}

/** defineTool with forge's repositories fixed, so each tool's argument types are still inferred. */
export function forgeTool<Input extends z.ZodRawShape>(tool: ToolDefinition<Input, ForgeRepositories>): ToolDefinition<Input, ForgeRepositories> {
  return defineTool(tool);
}
