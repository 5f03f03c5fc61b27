import type { Knex } from 'knex';

/**
 * reclaim: recovery policies and their schedule history. While a schedule segment is open the
 * target is snapshotted every `rpo_minutes` from `starts_at`; a change of RPO closes the segment
 * and opens another, a pause closes it. Recovery simulations derive the snapshot series from
 * these rows, so no snapshot is stored.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('reclaim_policies', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 120).notNullable();
    t.string('target_kind', 32).notNullable()
      .checkIn(['database', 'file_share', 'object_bucket', 'virtual_machine', 'saas_workspace'], 'reclaim_policies_target_kind_check');
    t.string('target_name', 200).notNullable();
    t.integer('retention_days').notNullable();
    t.integer('rpo_minutes').notNullable();
    t.string('status', 16).notNullable().checkIn(['active', 'paused'], 'reclaim_policies_status_check');
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['tenant_id', 'name'], { indexName: 'reclaim_policies_tenant_name_unique' });
    t.index(['tenant_id', 'created_at'], 'reclaim_policies_tenant_created_idx');
  });
  await knex.schema.createTable('reclaim_schedule_segments', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('policy_id', 36).notNullable().references('id').inTable('reclaim_policies').onDelete('CASCADE');
    t.bigInteger('starts_at').notNullable();
    t.bigInteger('ends_at'); // null: the open (current) segment
    t.integer('rpo_minutes').notNullable();
    t.index(['policy_id', 'starts_at'], 'reclaim_segments_policy_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('reclaim_schedule_segments');
  await knex.schema.dropTable('reclaim_policies');
}
