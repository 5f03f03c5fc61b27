import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * reclaim: each policy's retention history, kept as schedule segments are. While a retention
 * segment is open its `retention_days` is in force; a change of retention closes it and opens
 * another. A snapshot has expired once any retention in force since it was taken has passed, so a
 * cut followed by a raise does not bring back what the cut expired. Existing policies get one open
 * segment with their retention, from their first schedule segment (their history before this
 * migration is not known).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('reclaim_retention_segments', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('policy_id', 36).notNullable().references('id').inTable('reclaim_policies').onDelete('CASCADE');
    t.bigInteger('starts_at').notNullable();
    t.bigInteger('ends_at'); // null: the retention in force now
    t.integer('retention_days').notNullable();
    t.index(['policy_id', 'starts_at'], 'reclaim_retention_segments_policy_idx');
  });
  const policies = (await knex('reclaim_policies').select('id', 'tenant_id', 'retention_days', 'created_at')) as Array<{ id: string; tenant_id: string; retention_days: number; created_at: number }>;
  for (const policy of policies) {
    const first = (await knex('reclaim_schedule_segments').where('policy_id', policy.id).min({ at: 'starts_at' }).first()) as { at: number | string | null } | undefined;
    await knex('reclaim_retention_segments').insert({
      id: randomUUID(), tenant_id: policy.tenant_id, policy_id: policy.id,
      starts_at: Number(first?.at ?? policy.created_at), ends_at: null, retention_days: policy.retention_days,
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('reclaim_retention_segments');
}
