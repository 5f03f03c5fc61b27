import type { Knex } from 'knex';

/**
 * forge's newest-first (and oldest-first) listings page by (time, id): their indexes end in `id`
 * too, so a page is read in index order with no sort step (docs/performance.md, item 6).
 */
const INDEXES = [
  { table: 'forge_conversations', name: 'forge_conversations_tenant_updated_idx', before: ['tenant_id', 'updated_at'], after: ['tenant_id', 'updated_at', 'id'] },
  { table: 'forge_messages', name: 'forge_messages_conversation_idx', before: ['conversation_id', 'created_at'], after: ['conversation_id', 'created_at', 'id'] },
  { table: 'forge_content', name: 'forge_content_tenant_created_idx', before: ['tenant_id', 'created_at'], after: ['tenant_id', 'created_at', 'id'] },
];

export async function up(knex: Knex): Promise<void> {
  for (const { table, name, after } of INDEXES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex([], name);
      t.index(after, name);
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const { table, name, before } of INDEXES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex([], name);
      t.index(before, name);
    });
  }
}
