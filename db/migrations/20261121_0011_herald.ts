import type { Knex } from 'knex';

/** herald: broadcasts to a tenant's subscribers, and its trust-center documents. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('herald_subscribers', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('email', 254).notNullable();
    t.string('name', 200);
    t.string('segment', 32).notNullable().checkIn(['customers', 'partners', 'internal'], 'herald_subscribers_segment_check');
    t.bigInteger('created_at').notNullable(); // when they subscribed
    t.bigInteger('unsubscribed_at');
    t.unique(['tenant_id', 'email'], { indexName: 'herald_subscribers_tenant_email_unique' });
    t.index(['tenant_id', 'segment'], 'herald_subscribers_tenant_segment_idx');
  });
  await knex.schema.createTable('herald_broadcasts', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('title', 200).notNullable();
    t.text('body').notNullable();
    t.string('audience', 32).notNullable().checkIn(['everyone', 'customers', 'partners', 'internal'], 'herald_broadcasts_audience_check');
    t.string('status', 16).notNullable().checkIn(['draft', 'scheduled', 'sent'], 'herald_broadcasts_status_check');
    t.bigInteger('scheduled_for');
    t.bigInteger('sent_at');
    t.string('sent_by', 36);
    t.integer('recipients_count');
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['tenant_id', 'status', 'created_at'], 'herald_broadcasts_tenant_status_idx');
    t.index(['tenant_id', 'created_at'], 'herald_broadcasts_tenant_created_idx');
  });
  await knex.schema.createTable('herald_documents', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('title', 200).notNullable();
    t.string('category', 32).notNullable().checkIn(['policy', 'certification', 'report', 'subprocessors', 'faq'], 'herald_documents_category_check');
    t.string('visibility', 16).notNullable().checkIn(['public', 'nda'], 'herald_documents_visibility_check');
    t.text('body').notNullable();
    t.string('status', 16).notNullable().checkIn(['draft', 'published'], 'herald_documents_status_check');
    t.integer('version').notNullable();
    t.bigInteger('published_at');
    t.string('published_by', 36);
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['tenant_id', 'status', 'created_at'], 'herald_documents_tenant_status_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('herald_documents');
  await knex.schema.dropTable('herald_broadcasts');
  await knex.schema.dropTable('herald_subscribers');
}
