import type { Knex } from 'knex';
import { dialectOf } from '../connect.js';

/**
 * The authorization server's additions to the OAuth store:
 * - connections.client_kind must hold 'metadata_document' (17 characters; 0002 made it 16);
 * - oidc_payloads.created_at, so that self-registered clients nobody ever used can be purged
 *   (open registration would otherwise grow the table forever: notes §2.5).
 */
export async function up(knex: Knex): Promise<void> {
  // SQLite does not enforce varchar lengths, and altering a column there rebuilds the table.
  if (dialectOf(knex) === 'postgres') await knex.raw('alter table connections alter column client_kind type varchar(32)');
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.bigInteger('created_at');
    t.index(['model', 'created_at'], 'oidc_payloads_model_created_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payloads', (t) => {
    t.dropIndex(['model', 'created_at'], 'oidc_payloads_model_created_idx');
    t.dropColumn('created_at');
  });
  if (dialectOf(knex) === 'postgres') await knex.raw('alter table connections alter column client_kind type varchar(16)');
}
