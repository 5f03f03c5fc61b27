import type { Knex } from 'knex';

/**
 * oidc-provider's models (one table, keyed by model and id) and Portico's connections.
 * Bearer values (access, refresh, code, registration tokens) are stored as sha256(id), never in clear.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oidc_payloads', (t) => {
    t.string('model', 40).notNullable();
    t.string('id', 255).notNullable();
    t.text('payload').notNullable();
    t.string('grant_id', 255);
    t.string('uid', 255);
    t.string('user_code', 255);
    t.string('client_id', 255);
    t.string('account_id', 255);
    t.bigInteger('expires_at');
    t.bigInteger('consumed_at');
    t.bigInteger('revoked_at');
    t.primary(['model', 'id']);
    t.index(['grant_id'], 'oidc_payloads_grant_idx');
    t.index(['model', 'uid'], 'oidc_payloads_uid_idx');
    t.index(['model', 'user_code'], 'oidc_payloads_user_code_idx');
    t.index(['expires_at'], 'oidc_payloads_expires_idx');
  });
  // One connection = one OAuth grant: client x user x tenant x product x scopes (DESIGN.md §3).
  await knex.schema.createTable('connections', (t) => {
    t.string('id', 36).primary();
    t.string('grant_id', 255).notNullable().unique('connections_grant_unique');
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('user_id', 36).notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('client_id', 2048).notNullable();
    t.string('client_name', 200);
    t.string('client_kind', 16).notNullable(); // registered | dynamic | metadata_document
    t.string('product', 32).notNullable();
    t.string('resource', 2048).notNullable();
    t.text('scopes').notNullable(); // space separated
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at');
    t.bigInteger('call_count').notNullable().defaultTo(0);
    t.bigInteger('revoked_at');
    t.string('revoked_by', 36);
    t.index(['tenant_id', 'created_at'], 'connections_tenant_idx');
    t.index(['user_id'], 'connections_user_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('connections');
  await knex.schema.dropTable('oidc_payloads');
}
