import type { Knex } from 'knex';

/**
 * terrain: workflow definitions with ordered steps, and runs that walk through them. A definition
 * is immutable once created, so a run's step positions always mean the same steps.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('terrain_workflows', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.text('description');
    t.integer('step_count').notNullable();
    t.string('created_by', 36);
    t.bigInteger('created_at').notNullable();
    t.unique(['tenant_id', 'name'], { indexName: 'terrain_workflows_tenant_name_unique' });
    t.index(['tenant_id', 'created_at'], 'terrain_workflows_tenant_created_idx');
  });
  await knex.schema.createTable('terrain_workflow_steps', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('workflow_id', 36).notNullable().references('id').inTable('terrain_workflows').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.string('name', 200).notNullable();
    t.text('instructions');
    t.unique(['workflow_id', 'position'], { indexName: 'terrain_steps_workflow_position_unique' });
  });
  await knex.schema.createTable('terrain_runs', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('workflow_id', 36).notNullable().references('id').inTable('terrain_workflows').onDelete('CASCADE');
    t.string('subject', 200).notNullable();
    t.string('status', 16).notNullable().checkIn(['running', 'completed', 'cancelled'], 'terrain_runs_status_check');
    /** 1-based position of the step being worked on (or where a cancelled run stopped); null once completed. */
    t.integer('current_position');
    t.string('started_by', 36);
    t.bigInteger('created_at').notNullable(); // when the run started
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('completed_at');
    t.bigInteger('cancelled_at');
    t.string('cancelled_by', 36);
    t.string('cancel_reason', 500);
    t.index(['tenant_id', 'status', 'created_at'], 'terrain_runs_tenant_status_idx');
    t.index(['workflow_id'], 'terrain_runs_workflow_idx');
  });
  await knex.schema.createTable('terrain_run_events', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('run_id', 36).notNullable().references('id').inTable('terrain_runs').onDelete('CASCADE');
    t.integer('sequence').notNullable();
    t.string('action', 16).notNullable().checkIn(['started', 'advanced', 'completed', 'cancelled'], 'terrain_run_events_action_check');
    t.integer('step_position');
    t.string('step_name', 200);
    t.string('note', 1000);
    t.string('user_id', 36);
    t.bigInteger('at').notNullable();
    t.unique(['run_id', 'sequence'], { indexName: 'terrain_run_events_run_sequence_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('terrain_run_events');
  await knex.schema.dropTable('terrain_runs');
  await knex.schema.dropTable('terrain_workflow_steps');
  await knex.schema.dropTable('terrain_workflows');
}
