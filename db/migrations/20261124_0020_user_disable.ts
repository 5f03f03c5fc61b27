import type { Knex } from 'knex';

/**
 * Disabled accounts (`user disable`, README "Operator CLI"): while `disabled_at` is set, the person
 * cannot sign in, their memberships count for nothing and every token of theirs is refused.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.bigInteger('disabled_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('disabled_at');
  });
}
