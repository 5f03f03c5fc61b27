/**
 * forge's tenant-bound repositories. Every query goes through the TenantScope the pipeline built
 * for this call, inside the call's transaction; nothing here takes a tenant id.
 */
import type { TemplateValues, TenantScope } from '../../../db/tenant_scope.js';
import { decodeCursor, encodeCursor } from '../common.js';

export interface DbConversationRow {
  id: string;
  tenant_id: string;
  title: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

const CONVERSATION_COLUMNS = ['id', 'tenant_id', 'title', 'created_by', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof DbConversationRow>;

export interface DbMessageRow {
  id: string;
  tenant_id: string;
  conversation_id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  author_id: string | null;
  created_at: number;
}

export interface DbContentRow {
  id: string;
  tenant_id: string;
  kind: string;
  title: string;
  body: string;
  status: 'draft' | 'published';
  created_by: string | null;
  created_at: number;
}

export interface DbDocumentRow {
  id: string;
  tenant_id: string;
  title: string;
  media_type: 'text/plain' | 'text/markdown';
  text: string;
  size_bytes: number;
  created_by: string | null;
  created_at: number;
}

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Newest first by (time column, id), after the row `after` if given: a keyset page of `limit` rows. */
function newestFirstQuery(query: import('knex').Knex.QueryBuilder, table: string, column: string, limit: number, after?: { at: number; id: string }) {
  if (after) query.where((q) => q.where(`${table}.${column}`, '<', after.at).orWhere((same) => same.where(`${table}.${column}`, after.at).andWhere(`${table}.id`, '<', after.id)));
  return query.orderBy([{ column: `${table}.${column}`, order: 'desc' }, { column: `${table}.id`, order: 'desc' }]).limit(limit);
}

/** A page of `limit` rows from `limit + 1` read, with the cursor of the next page when there is one. */
function pageOf<Row extends { id: string }>(rows: Row[], limit: number, keyOf: (row: Row) => number): Page<Row> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next_cursor: rows.length > limit && last ? encodeCursor(keyOf(last), last.id) : null };
}

/** Newest first by (time column, id): a keyset cursor, stable while rows are added. */
async function newestFirst<Row extends { id: string }>(
  query: import('knex').Knex.QueryBuilder,
  table: string,
  column: string,
  page: PageRequest,
  keyOf: (row: Row) => number,
): Promise<Page<Row>> {
  const rows = (await newestFirstQuery(query, table, column, page.limit + 1, page.cursor ? decodeCursor(page.cursor) : undefined)) as Row[];
  return pageOf(rows, page.limit, keyOf);
}

export function forgeRepositories(scope: TenantScope) {
  const now = () => Date.now();
  /** Inserts a row stamped with the tenant and a new id. */
  const insert = <Row extends { id: string; tenant_id: string }>(table: string, row: Omit<Row, 'id' | 'tenant_id'>): Promise<Row> =>
    scope.insert<Omit<Row, 'id' | 'tenant_id'> & { id?: string }>(table, row as Omit<Row, 'id' | 'tenant_id'> & { id?: string }) as Promise<Row>;
  return {
    conversations: {
      /**
       * A page of conversations, newest created first, each with its number of messages, in one
       * statement: the count is a subquery per row, tenant-bound like the page (an index range on
       * forge_messages), so a listing costs one round trip, not two. Keyed by creation time, which
       * never changes: by last activity, a conversation that got a message while a client paged
       * jumped ahead of the cursor and was never listed.
       */
      list: async (page: PageRequest): Promise<Page<DbConversationRow & { message_count: number | string }>> => {
        const after = page.cursor ? decodeCursor(page.cursor) : undefined;
        // The hottest listing: a template, compiled once (TenantScope.select); one shape per cursor or none.
        const values: TemplateValues = after ? { limit: page.limit + 1, at: after.at, id: after.id } : { limit: page.limit + 1 };
        const rows = await scope.select<DbConversationRow & { message_count: number | string }>(after ? 'forge.conversations.after' : 'forge.conversations.first', values, (template, v) => {
          const messages = template.from('forge_messages').where('forge_messages.conversation_id', template.db.ref('forge_conversations.id')).count({ n: '*' });
          // Columns by name, not `forge_conversations.*`: a statement PostgreSQL keeps prepared must not change its result columns (db/pg_client.ts).
          const query = template.from('forge_conversations').select(...CONVERSATION_COLUMNS.map((c) => `forge_conversations.${c}`), messages.as('message_count'));
          return newestFirstQuery(query, 'forge_conversations', 'created_at', v.limit as number, after && { at: v.at as number, id: v.id as string });
        });
        return pageOf(rows, page.limit, (r) => r.created_at);
      },
      require: (id: string) => scope.require<DbConversationRow>('forge_conversations', id, 'conversation'),
      async create(input: { title: string; createdBy: string }): Promise<DbConversationRow> {
        const at = now();
        return insert<DbConversationRow>('forge_conversations', { title: input.title, created_by: input.createdBy, created_at: at, updated_at: at });
      },
      async touch(id: string): Promise<void> {
        await scope.update('forge_conversations', id, { updated_at: now() });
      },
      /**
       * Deletes a conversation with its messages and returns how many messages went with it, or
       * undefined when it is gone already. Locked first: a message being added lands before (and is
       * counted) or finds no conversation.
       */
      async delete(id: string): Promise<number | undefined> {
        if (!(await scope.lock('forge_conversations', id))) return undefined;
        // Messages go with their conversation (ON DELETE CASCADE); deleted explicitly too, so the
        // count is reported and SQLite without foreign keys would behave the same.
        const messages = await scope.from('forge_messages').where('forge_messages.conversation_id', id).delete();
        await scope.delete('forge_conversations', id);
        return messages;
      },
      messageCount: async (id: string): Promise<number> => {
        const row = await scope.from('forge_messages').where('forge_messages.conversation_id', id).count({ n: '*' }).first();
        return Number(row?.n ?? 0);
      },
    },
    messages: {
      /** The conversation's newest `limit` messages, newest first. */
      newest: (conversationId: string, limit: number) =>
        scope.from<DbMessageRow>('forge_messages').where('forge_messages.conversation_id', conversationId)
          .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit) as Promise<DbMessageRow[]>,
      async add(input: { conversationId: string; role: DbMessageRow['role']; content: string; authorId: string | null; at?: number }): Promise<DbMessageRow> {
        return insert<DbMessageRow>('forge_messages', {
          conversation_id: input.conversationId, role: input.role, content: input.content, author_id: input.authorId, created_at: input.at ?? now(),
        });
      },
    },
    content: {
      list: (page: PageRequest & { kind?: string; status?: string }) => {
        const query = scope.from('forge_content');
        if (page.kind) query.where('forge_content.kind', page.kind);
        if (page.status) query.where('forge_content.status', page.status);
        return newestFirst<DbContentRow>(query, 'forge_content', 'created_at', page, (r) => r.created_at);
      },
      async create(input: Omit<DbContentRow, 'id' | 'tenant_id' | 'created_at'>): Promise<DbContentRow> {
        return insert<DbContentRow>('forge_content', { ...input, created_at: now() });
      },
    },
    documents: {
      require: (id: string) => scope.require<DbDocumentRow>('forge_documents', id, 'document'),
      async create(input: { title: string; mediaType: DbDocumentRow['media_type']; text: string; createdBy: string }): Promise<DbDocumentRow> {
        return insert<DbDocumentRow>('forge_documents', {
          title: input.title, media_type: input.mediaType, text: input.text, size_bytes: Buffer.byteLength(input.text, 'utf8'),
          created_by: input.createdBy, created_at: now(),
        });
      },
    },
  };
}

export type ForgeRepositories = ReturnType<typeof forgeRepositories>;
