import type { Knex } from 'knex';

/**
 * forge.list_conversations pages newest created first by (created_at, id), an immutable key: by
 * last activity (updated_at), a conversation that got a message while a client paged jumped ahead
 * of the cursor and was never listed. The index serves the new order; the one on updated_at served
 * only the old one, and went with it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('forge_conversations', (t) => {
    t.dropIndex([], 'forge_conversations_tenant_updated_idx');
    t.index(['tenant_id', 'created_at', 'id'], 'forge_conversations_tenant_created_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('forge_conversations', (t) => {
    t.dropIndex([], 'forge_conversations_tenant_created_idx');
    t.index(['tenant_id', 'updated_at', 'id'], 'forge_conversations_tenant_updated_idx');
  });
}
