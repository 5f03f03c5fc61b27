import type { Knex } from 'knex';

/**
 * The MCP host's own state: pending confirmations of destructive tool calls (DESIGN.md §6 step 5).
 * A row is bound to one connection (grant, user, tenant, client), one tool and the sha256 of the
 * call's canonical arguments; it expires and is consumed at most once (conditional UPDATE).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mcp_confirmations', (t) => {
    t.string('id', 36).primary();
    t.string('connection_id', 36).notNullable().references('id').inTable('connections').onDelete('CASCADE');
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('user_id', 36).notNullable();
    t.string('tool', 200).notNullable();
    t.string('args_hash', 64).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('consumed_at');
    t.index(['connection_id', 'tool', 'args_hash'], 'mcp_confirmations_lookup_idx');
    t.index(['expires_at'], 'mcp_confirmations_expires_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mcp_confirmations');
}
