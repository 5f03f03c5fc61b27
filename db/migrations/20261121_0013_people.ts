import type { Knex } from 'knex';

/** people: profiles, their lifecycle events (the history) and onboarding checklists. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('people_profiles', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('full_name', 200).notNullable();
    t.string('email', 254).notNullable();
    t.string('job_title', 200);
    t.string('department', 100);
    t.string('location', 100);
    t.string('manager_id', 36).references('id').inTable('people_profiles').onDelete('SET NULL');
    t.string('status', 16).notNullable().checkIn(['pre_hire', 'onboarding', 'active', 'offboarded'], 'people_profiles_status_check');
    /** Calendar dates (UTC midnight, epoch ms). */
    t.bigInteger('start_date');
    t.bigInteger('end_date');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['tenant_id', 'email'], { indexName: 'people_profiles_tenant_email_unique' });
    t.index(['tenant_id', 'status', 'full_name'], 'people_profiles_tenant_status_idx');
  });
  await knex.schema.createTable('people_lifecycle_events', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('person_id', 36).notNullable().references('id').inTable('people_profiles').onDelete('CASCADE');
    /** Per-person order: events written in one millisecond still read back in the order they happened. */
    t.integer('sequence').notNullable();
    t.string('kind', 32).notNullable();
    t.text('detail');
    t.string('actor_user_id', 36);
    t.bigInteger('at').notNullable();
    t.unique(['person_id', 'sequence'], { indexName: 'people_events_person_sequence_unique' });
  });
  await knex.schema.createTable('people_onboarding_tasks', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('person_id', 36).notNullable().references('id').inTable('people_profiles').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.string('title', 200).notNullable();
    t.string('owner', 16).notNullable().checkIn(['hr', 'it', 'manager', 'person'], 'people_tasks_owner_check');
    t.string('status', 16).notNullable().checkIn(['open', 'done', 'cancelled'], 'people_tasks_status_check');
    t.bigInteger('due_date');
    t.bigInteger('completed_at');
    t.string('completed_by', 36);
    t.unique(['person_id', 'position'], { indexName: 'people_tasks_person_position_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('people_onboarding_tasks');
  await knex.schema.dropTable('people_lifecycle_events');
  await knex.schema.dropTable('people_profiles');
}
