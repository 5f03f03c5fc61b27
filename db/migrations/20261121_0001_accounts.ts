import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenants', (t) => {
    t.string('id', 36).primary();
    t.string('slug', 63).notNullable().unique('tenants_slug_unique');
    t.string('name', 200).notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('users', (t) => {
    t.string('id', 36).primary();
    t.string('email', 254).notNullable().unique('users_email_unique');
    t.string('display_name', 200);
    t.string('password_hash', 200).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_login_at');
  });
  await knex.schema.createTable('memberships', (t) => {
    t.string('user_id', 36).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('role', 16).notNullable().checkIn(['admin', 'member'], 'memberships_role_check');
    t.bigInteger('created_at').notNullable();
    t.primary(['user_id', 'tenant_id']);
    t.index(['tenant_id'], 'memberships_tenant_idx');
  });
  await knex.schema.createTable('secrets', (t) => {
    t.string('name', 64).primary();
    t.text('value').notNullable();
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('secrets');
  await knex.schema.dropTable('memberships');
  await knex.schema.dropTable('users');
  await knex.schema.dropTable('tenants');
}
