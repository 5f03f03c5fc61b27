import type { Knex } from 'knex';

/**
 * Running instances and the keys each took up when it started (db/instances.ts): `keys activate`,
 * `keys retire` and `keys rotate` read them, so that no instance signs with a key another running
 * instance does not publish.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('instances', (t) => {
    t.string('id').primary();
    t.string('host').notNullable();
    t.integer('pid').notNullable();
    t.bigInteger('started_at').notNullable();
    t.bigInteger('seen_at').notNullable();
    /** JSON: { published, signing, cookie_verify, cookie_sign } (key ids and cookie-key fingerprints, never key material). */
    t.text('keys').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('instances');
}
