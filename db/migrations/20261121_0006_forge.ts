import type { Knex } from 'knex';

/** forge: AI chat conversations and their messages, written content, uploaded documents. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('forge_conversations', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('title', 200).notNullable();
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['tenant_id', 'updated_at'], 'forge_conversations_tenant_updated_idx');
  });
  await knex.schema.createTable('forge_messages', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('conversation_id', 36).notNullable().references('id').inTable('forge_conversations').onDelete('CASCADE');
    t.string('role', 16).notNullable().checkIn(['user', 'assistant', 'system'], 'forge_messages_role_check');
    t.text('content').notNullable();
    t.string('author_id', 36);
    t.bigInteger('created_at').notNullable();
    t.index(['conversation_id', 'created_at'], 'forge_messages_conversation_idx');
  });
  await knex.schema.createTable('forge_content', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('kind', 32).notNullable().checkIn(['article', 'blog_post', 'email', 'social_post', 'product_description', 'note'], 'forge_content_kind_check');
    t.string('title', 200).notNullable();
    t.text('body').notNullable();
    t.string('status', 16).notNullable().checkIn(['draft', 'published'], 'forge_content_status_check');
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.index(['tenant_id', 'created_at'], 'forge_content_tenant_created_idx');
  });
  await knex.schema.createTable('forge_documents', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('title', 200).notNullable();
    t.string('media_type', 32).notNullable().checkIn(['text/plain', 'text/markdown'], 'forge_documents_media_type_check');
    t.text('text').notNullable();
    t.integer('size_bytes').notNullable();
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.index(['tenant_id', 'created_at'], 'forge_documents_tenant_created_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('forge_documents');
  await knex.schema.dropTable('forge_content');
  await knex.schema.dropTable('forge_messages');
  await knex.schema.dropTable('forge_conversations');
}
