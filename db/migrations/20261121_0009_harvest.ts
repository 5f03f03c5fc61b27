import type { Knex } from 'knex';

/**
 * harvest: salvage lots and intelligence reports. Reports keep lower-cased copies of the searched
 * text (`*_search`, tags as `|a|b|`) so that search is the same plain LIKE on SQLite and PostgreSQL.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('harvest_lots', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('item', 200).notNullable();
    t.text('description');
    t.string('condition', 16).notNullable().checkIn(['new', 'like_new', 'good', 'fair', 'poor', 'scrap'], 'harvest_lots_condition_check');
    t.integer('quantity').notNullable();
    t.string('currency', 3).notNullable();
    t.bigInteger('estimated_value_minor').notNullable();
    t.string('location', 200);
    t.string('status', 16).notNullable().checkIn(['available', 'reserved', 'sold', 'scrapped'], 'harvest_lots_status_check');
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['tenant_id', 'created_at'], 'harvest_lots_tenant_created_idx');
    t.index(['tenant_id', 'status'], 'harvest_lots_tenant_status_idx');
  });
  await knex.schema.createTable('harvest_reports', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('subject', 200).notNullable();
    t.string('source', 200).notNullable();
    t.text('summary').notNullable();
    t.string('confidence', 16).notNullable().checkIn(['low', 'medium', 'high'], 'harvest_reports_confidence_check');
    t.text('tags').notNullable(); // '|tag-a|tag-b|' (lower case), '' when none
    t.string('subject_search', 200).notNullable();
    t.text('summary_search').notNullable();
    t.bigInteger('observed_at').notNullable();
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['tenant_id', 'created_at'], 'harvest_reports_tenant_created_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('harvest_reports');
  await knex.schema.dropTable('harvest_lots');
}
