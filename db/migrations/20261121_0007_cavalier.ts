import type { Knex } from 'knex';

/**
 * cavalier: deals, quotes with their line items, statements of work with their milestones.
 * Money is integer minor units of the row's ISO 4217 currency; totals are computed by the server.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('cavalier_deals', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('title', 200).notNullable();
    t.string('customer', 200).notNullable();
    t.string('stage', 16).notNullable().checkIn(['lead', 'qualified', 'proposal', 'won', 'lost'], 'cavalier_deals_stage_check');
    t.string('currency', 3).notNullable();
    t.bigInteger('value_minor').notNullable();
    t.bigInteger('expected_close_at');
    t.text('notes');
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('closed_at');
    t.index(['tenant_id', 'created_at'], 'cavalier_deals_tenant_created_idx');
    t.index(['tenant_id', 'stage'], 'cavalier_deals_tenant_stage_idx');
  });
  await knex.schema.createTable('cavalier_quotes', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('deal_id', 36).references('id').inTable('cavalier_deals').onDelete('SET NULL');
    t.string('customer', 200).notNullable();
    t.string('currency', 3).notNullable();
    t.string('status', 16).notNullable().checkIn(['draft', 'sent', 'accepted', 'rejected'], 'cavalier_quotes_status_check');
    t.integer('tax_rate_bp').notNullable(); // basis points: 2000 = 20 %
    t.bigInteger('subtotal_minor').notNullable();
    t.bigInteger('tax_minor').notNullable();
    t.bigInteger('total_minor').notNullable();
    t.bigInteger('valid_until');
    t.text('notes');
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('sent_at');
    t.bigInteger('decided_at');
    t.index(['tenant_id', 'created_at'], 'cavalier_quotes_tenant_created_idx');
    t.index(['tenant_id', 'status'], 'cavalier_quotes_tenant_status_idx');
    t.index(['deal_id'], 'cavalier_quotes_deal_idx');
  });
  await knex.schema.createTable('cavalier_quote_lines', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('quote_id', 36).notNullable().references('id').inTable('cavalier_quotes').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.string('description', 500).notNullable();
    t.integer('quantity').notNullable();
    t.bigInteger('unit_price_minor').notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.unique(['quote_id', 'position'], { indexName: 'cavalier_quote_lines_position_unique' });
  });
  await knex.schema.createTable('cavalier_sows', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('deal_id', 36).notNullable().references('id').inTable('cavalier_deals').onDelete('CASCADE');
    t.string('title', 200).notNullable();
    t.text('scope_summary').notNullable();
    t.string('status', 16).notNullable().checkIn(['draft', 'signed', 'completed'], 'cavalier_sows_status_check');
    t.string('currency', 3).notNullable();
    t.bigInteger('total_minor').notNullable();
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['tenant_id', 'created_at'], 'cavalier_sows_tenant_created_idx');
    t.index(['deal_id'], 'cavalier_sows_deal_idx');
  });
  await knex.schema.createTable('cavalier_sow_milestones', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('sow_id', 36).notNullable().references('id').inTable('cavalier_sows').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.string('title', 200).notNullable();
    t.string('due_date', 10).notNullable(); // YYYY-MM-DD: a calendar date, not an instant
    t.bigInteger('amount_minor').notNullable();
    t.unique(['sow_id', 'position'], { indexName: 'cavalier_sow_milestones_position_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('cavalier_sow_milestones');
  await knex.schema.dropTable('cavalier_sows');
  await knex.schema.dropTable('cavalier_quote_lines');
  await knex.schema.dropTable('cavalier_quotes');
  await knex.schema.dropTable('cavalier_deals');
}
