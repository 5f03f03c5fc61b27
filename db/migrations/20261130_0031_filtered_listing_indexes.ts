import type { Knex } from 'knex';

/**
 * A listing filtered on a column that already had an index for it (a deal's stage, a quote's,
 * a lot's or a person's status, a subscriber's segment, a workflow's runs) reads that index in the
 * listing's order too: each such index gains the listing's time and `id`. With only migration
 * 0030's indexes, SQLite read the tenant's rows in order and skipped those that did not match, so
 * a value few rows hold cost a scan of all of them: ten won deals among 50,000, a page in 17 ms.
 * Filters without an index of their own still read that way (docs/performance.md item 38).
 */
const EXTENDED = [
  { table: 'cavalier_quotes', name: 'cavalier_quotes_tenant_status_idx', before: ['tenant_id', 'status'] },
  { table: 'cavalier_deals', name: 'cavalier_deals_tenant_stage_idx', before: ['tenant_id', 'stage'] },
  { table: 'harvest_lots', name: 'harvest_lots_tenant_status_idx', before: ['tenant_id', 'status'] },
  { table: 'herald_subscribers', name: 'herald_subscribers_tenant_segment_idx', before: ['tenant_id', 'segment'] },
  { table: 'terrain_runs', name: 'terrain_runs_workflow_idx', before: ['workflow_id'] },
].map((index) => ({ ...index, after: [...index.before, 'created_at', 'id'] }));

/** people's status index ended in the name, which no query orders by: it now ends in the listing's order. */
const REORDERED = [
  { table: 'people_profiles', name: 'people_profiles_tenant_status_idx', before: ['tenant_id', 'status', 'full_name'], after: ['tenant_id', 'status', 'created_at', 'id'] },
];

export async function up(knex: Knex): Promise<void> {
  for (const { table, name, after } of [...EXTENDED, ...REORDERED]) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex([], name);
      t.index(after, name);
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const { table, name, before } of [...EXTENDED, ...REORDERED]) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex([], name);
      t.index(before, name);
    });
  }
}
