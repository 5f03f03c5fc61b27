import type { Knex } from 'knex';

/**
 * Suspended organizations (`tenant suspend`, README "Operator CLI"): while `suspended_at` is set,
 * nobody signs in to it or connects to it, and every token of it is refused.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.bigInteger('suspended_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.dropColumn('suspended_at');
  });
}
