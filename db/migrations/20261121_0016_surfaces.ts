import type { Knex } from 'knex';

/** Product surfaces whose status an operator changed (e.g. midas shipped); absent = the catalog's default. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('surfaces', (t) => {
    t.string('product', 32).primary();
    t.string('status', 16).notNullable().checkIn(['live', 'roadmap'], 'surfaces_status_check');
    t.bigInteger('changed_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('surfaces');
}
