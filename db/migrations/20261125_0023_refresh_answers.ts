import type { Knex } from 'knex';

/**
 * oidc_payloads.successor: on a rotated refresh token's row, the answer its rotation gave, sealed
 * with a key derived from that refresh token (auth/refresh_repeat.ts). A refresh repeated inside
 * the grace window gets that answer instead of being refused; it is erased when the window ends.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.text('successor');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropColumn('successor');
  });
}
