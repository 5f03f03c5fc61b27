import type { Knex } from 'knex';

/** pawvault: a household's pets and their health records. Dates are UTC midnight in epoch ms. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('pawvault_pets', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('species', 16).notNullable().checkIn(['dog', 'cat', 'rabbit', 'bird', 'reptile', 'other'], 'pawvault_pets_species_check');
    t.string('breed', 100);
    t.string('sex', 16).checkIn(['female', 'male', 'unknown'], 'pawvault_pets_sex_check');
    t.bigInteger('birth_date');
    t.string('microchip_number', 32);
    t.float('weight_kg');
    t.string('notes', 2000);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['tenant_id', 'name'], 'pawvault_pets_tenant_name_idx');
  });
  await knex.schema.createTable('pawvault_vaccinations', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('pet_id', 36).notNullable().references('id').inTable('pawvault_pets').onDelete('CASCADE');
    t.string('vaccine', 100).notNullable();
    t.bigInteger('administered_on').notNullable();
    t.bigInteger('due_on');
    t.string('clinic', 200);
    t.string('notes', 1000);
    t.bigInteger('created_at').notNullable();
    t.index(['tenant_id', 'pet_id', 'administered_on'], 'pawvault_vaccinations_pet_idx');
    t.index(['tenant_id', 'due_on'], 'pawvault_vaccinations_due_idx');
  });
  await knex.schema.createTable('pawvault_visits', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('pet_id', 36).notNullable().references('id').inTable('pawvault_pets').onDelete('CASCADE');
    t.bigInteger('visited_on').notNullable();
    t.string('clinic', 200);
    t.string('reason', 500).notNullable();
    t.string('outcome', 2000);
    t.integer('cost_cents');
    t.bigInteger('created_at').notNullable();
    t.index(['tenant_id', 'pet_id', 'visited_on'], 'pawvault_visits_pet_idx');
  });
  await knex.schema.createTable('pawvault_medications', (t) => {
    t.string('id', 36).primary();
    t.string('tenant_id', 36).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('pet_id', 36).notNullable().references('id').inTable('pawvault_pets').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('dosage', 100).notNullable();
    t.string('frequency', 100).notNullable();
    t.bigInteger('start_date').notNullable();
    t.bigInteger('end_date');
    t.string('notes', 1000);
    t.bigInteger('created_at').notNullable();
    t.index(['tenant_id', 'pet_id', 'start_date'], 'pawvault_medications_pet_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('pawvault_medications');
  await knex.schema.dropTable('pawvault_visits');
  await knex.schema.dropTable('pawvault_vaccinations');
  await knex.schema.dropTable('pawvault_pets');
}
