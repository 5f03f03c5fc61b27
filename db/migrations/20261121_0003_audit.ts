import type { Knex } from 'knex';

/** The audit log: per-tenant hash chain (DESIGN.md §6). `chain` is the tenant id, or '_system'. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.string('id', 36).primary();
    t.string('chain', 36).notNullable();
    t.bigInteger('seq').notNullable();
    t.bigInteger('time').notNullable();
    t.string('tenant_id', 36);
    t.string('user_id', 36);
    t.string('client_id', 2048);
    t.string('connection_id', 36);
    t.string('product', 32);
    t.string('kind', 16).notNullable(); // tool | resource | prompt | auth | admin
    t.string('name', 200).notNullable();
    t.string('args_digest', 64);
    t.text('args_redacted');
    t.string('outcome', 64).notNullable();
    t.integer('duration_ms');
    t.string('request_id', 64);
    t.string('prev_hash', 64).notNullable();
    t.string('hash', 64).notNullable();
    t.unique(['chain', 'seq'], { indexName: 'audit_chain_seq_unique' });
    t.index(['tenant_id', 'time'], 'audit_tenant_time_idx');
    t.index(['tenant_id', 'product', 'time'], 'audit_tenant_product_time_idx');
    t.index(['connection_id', 'time'], 'audit_connection_time_idx');
  });
  await knex.schema.createTable('audit_heads', (t) => {
    t.string('chain', 36).primary();
    t.bigInteger('seq').notNullable();
    t.string('hash', 64).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_heads');
  await knex.schema.dropTable('audit_log');
}
