import type { Knex } from 'knex';

/**
 * pawvault_vaccinations.vaccine_key: the vaccine's name as pawvault compares it (trimmed, inner
 * spacing collapsed, lower-cased by JavaScript), written with each record, so that the latest dose
 * of each vaccine is found in SQL instead of by reading every dose ever recorded. JavaScript's
 * folding is kept, not SQL's: PostgreSQL's lower() differs from it ('İ'), and SQLite has no regular
 * expressions. text: the lower-cased name can be longer than the name ('İ' becomes two characters).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('pawvault_vaccinations', (t) => {
    t.text('vaccine_key');
  });
  const rows = (await knex('pawvault_vaccinations').select('id', 'vaccine')) as Array<{ id: string; vaccine: string }>;
  for (const row of rows) {
    await knex('pawvault_vaccinations').where({ id: row.id }).update({ vaccine_key: row.vaccine.trim().replace(/\s+/g, ' ').toLowerCase() });
  }
  await knex.schema.alterTable('pawvault_vaccinations', (t) => {
    t.index(['tenant_id', 'pet_id', 'vaccine_key', 'administered_on'], 'pawvault_vaccinations_key_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('pawvault_vaccinations', (t) => {
    t.dropIndex(['tenant_id', 'pet_id', 'vaccine_key', 'administered_on'], 'pawvault_vaccinations_key_idx');
    t.dropColumn('vaccine_key');
  });
}
