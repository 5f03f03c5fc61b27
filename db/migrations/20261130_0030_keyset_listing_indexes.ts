import type { Knex } from 'knex';

/**
 * Every product's listings, and the console's connections, page by (a time, id), newest or
 * soonest first, as forge's have since migration 0017: each gets an index that ends in its order,
 * so that a page is read in index order and the rows after a cursor are found by the index, with
 * no sort. Before, most of them sorted:
 * the ties of the last term, or (herald's subscribers and documents, terrain's runs, people,
 * pawvault's pets: no index on their time at all) every row the tenant has, on every page. An
 * index the new one extends is replaced by it; it served nothing the longer one does not.
 * test/products/product_edges/listing_order.ts explains every paged statement on both databases.
 */
const REPLACED = [
  { table: 'cavalier_quotes', name: 'cavalier_quotes_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'cavalier_quotes', name: 'cavalier_quotes_deal_idx', before: ['deal_id'], after: ['deal_id', 'created_at', 'id'] },
  { table: 'cavalier_deals', name: 'cavalier_deals_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'cavalier_sows', name: 'cavalier_sows_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'cavalier_sows', name: 'cavalier_sows_deal_idx', before: ['deal_id'], after: ['deal_id', 'created_at', 'id'] },
  { table: 'aegis_scans', name: 'aegis_scans_tenant_started_idx', before: ['tenant_id', 'started_at'] },
  { table: 'aegis_findings', name: 'aegis_findings_scan_severity_idx', before: ['scan_id', 'severity_rank'] },
  { table: 'harvest_lots', name: 'harvest_lots_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'harvest_reports', name: 'harvest_reports_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'reclaim_policies', name: 'reclaim_policies_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'reclaim_schedule_segments', name: 'reclaim_segments_policy_idx', before: ['policy_id', 'starts_at'] },
  { table: 'reclaim_retention_segments', name: 'reclaim_retention_segments_policy_idx', before: ['policy_id', 'starts_at'] },
  { table: 'herald_broadcasts', name: 'herald_broadcasts_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'herald_broadcasts', name: 'herald_broadcasts_tenant_status_idx', before: ['tenant_id', 'status', 'created_at'] },
  { table: 'herald_documents', name: 'herald_documents_tenant_status_idx', before: ['tenant_id', 'status', 'created_at'] },
  { table: 'terrain_workflows', name: 'terrain_workflows_tenant_created_idx', before: ['tenant_id', 'created_at'] },
  { table: 'terrain_runs', name: 'terrain_runs_tenant_status_idx', before: ['tenant_id', 'status', 'created_at'] },
  { table: 'pawvault_vaccinations', name: 'pawvault_vaccinations_pet_idx', before: ['tenant_id', 'pet_id', 'administered_on'] },
  { table: 'pawvault_vaccinations', name: 'pawvault_vaccinations_due_idx', before: ['tenant_id', 'due_on'] },
  { table: 'pawvault_visits', name: 'pawvault_visits_pet_idx', before: ['tenant_id', 'pet_id', 'visited_on'] },
  { table: 'pawvault_medications', name: 'pawvault_medications_pet_idx', before: ['tenant_id', 'pet_id', 'start_date'] },
  // The console's connections, newest first (db/grant_store.ts listConnections).
  { table: 'connections', name: 'connections_tenant_idx', before: ['tenant_id', 'created_at'] },
].map((index) => ({ after: [...index.before, 'id'], ...index }));

/** Listings by creation time that had no index on it. */
const ADDED = ['herald_subscribers', 'herald_documents', 'terrain_runs', 'people_profiles', 'pawvault_pets'].map((table) => ({
  table,
  name: `${table}_tenant_created_idx`,
  columns: ['tenant_id', 'created_at', 'id'],
}));

export async function up(knex: Knex): Promise<void> {
  for (const { table, name, after } of REPLACED) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex([], name);
      t.index(after, name);
    });
  }
  for (const { table, name, columns } of ADDED) await knex.schema.alterTable(table, (t) => t.index(columns, name));
}

export async function down(knex: Knex): Promise<void> {
  for (const { table, name } of ADDED) await knex.schema.alterTable(table, (t) => t.dropIndex([], name));
  for (const { table, name, before } of REPLACED) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex([], name);
      t.index(before, name);
    });
  }
}
