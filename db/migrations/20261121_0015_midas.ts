import type { Knex } from 'knex';

/** midas: a tenant's public-API endpoints and their daily usage counters. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('midas_endpoints', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('method', 8).notNullable().checkIn(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], 'midas_endpoints_method_check');
    t.string('path', 300).notNullable();
    t.string('summary', 500);
    t.string('status', 16).notNullable().checkIn(['active', 'deprecated'], 'midas_endpoints_status_check');
    t.integer('rate_limit_per_minute').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['tenant_id', 'method', 'path'], { indexName: 'midas_endpoints_tenant_route_unique' });
  });
  await knex.schema.createTable('midas_usage_daily', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('endpoint_id', 36).notNullable().references('id').inTable('midas_endpoints').onDelete('CASCADE');
    /** UTC midnight of the counted day, epoch ms. */
    t.bigInteger('day').notNullable();
    t.integer('calls').notNullable();
    t.integer('errors').notNullable();
    t.integer('p95_ms');
    t.unique(['endpoint_id', 'day'], { indexName: 'midas_usage_endpoint_day_unique' });
    t.index(['tenant_id', 'day'], 'midas_usage_tenant_day_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('midas_usage_daily');
  await knex.schema.dropTable('midas_endpoints');
}
