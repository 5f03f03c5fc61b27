import type { Knex } from 'knex';

/**
 * Server-side console sessions (docs/console.md): the cookie carries a random id, this table only
 * its sha256, so signing out deletes the row and a saved copy of the cookie names nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('console_sessions', (t) => {
    t.string('id_hash', 64).primary();
    t.string('user_id', 36).notNullable().references('id').inTable('users').onDelete('CASCADE');
    // Absent until a person in several organizations chooses one.
    t.string('tenant_id', 36).references('id').inTable('tenants').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['user_id'], 'console_sessions_user_idx');
    t.index(['expires_at'], 'console_sessions_expires_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('console_sessions');
}
