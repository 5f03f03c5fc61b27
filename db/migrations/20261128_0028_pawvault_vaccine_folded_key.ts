import type { Knex } from 'knex';

/** foldedKey of mcp/products/common.ts as it is at this migration: a migration keeps its own copy. */
const foldedKey = (text: string) => text.toLowerCase().replaceAll('\u03c2', '\u03c3').replaceAll('i\u0307', 'i');

/** pawvault's vaccine key as it is at this migration: spacing collapsed, then foldedKey. */
const vaccineKey = (vaccine: string) => foldedKey(vaccine.trim().replace(/\s+/g, ' '));

/** The key 0024 wrote (spacing collapsed, JavaScript's lower case alone), which down writes back. */
const vaccineKey0024 = (vaccine: string) => vaccine.trim().replace(/\s+/g, ' ').toLowerCase();

const BATCH = 1_000;

/**
 * pawvault_vaccinations.vaccine_key folded by foldedKey, the rule every other case-insensitive
 * name of Portico uses (terrain's workflow names, 0027), instead of JavaScript's lower case alone:
 * a dose of "İmovax" (dotted capital I) or "ΛΥΣΣΑΣ" (final sigma) was another vaccine than its
 * booster spelled "imovax" or "λυσσασ", so list_due_vaccinations kept the replaced dose as due.
 * Doses that now share a key are meant to: they are one vaccine, and the latest dose replaces the
 * earlier ones. The key is not unique (every dose has one), so nothing has to be renamed.
 */
export async function up(knex: Knex): Promise<void> {
  await rewriteKeys(knex, vaccineKey);
}

export async function down(knex: Knex): Promise<void> {
  await rewriteKeys(knex, vaccineKey0024);
}

/**
 * Writes `keyOf(vaccine)` where it differs from the stored key, reading the doses a batch at a time
 * in id order. 0029 rewrites the keys with it too (a migration does not change once shipped).
 */
export async function rewriteKeys(knex: Knex, keyOf: (vaccine: string) => string): Promise<void> {
  let after = '';
  for (;;) {
    const rows = (await knex('pawvault_vaccinations').where('id', '>', after).orderBy('id').limit(BATCH)
      .select('id', 'vaccine', 'vaccine_key')) as Array<{ id: string; vaccine: string; vaccine_key: string | null }>;
    for (const row of rows) {
      const key = keyOf(row.vaccine);
      if (key !== row.vaccine_key) await knex('pawvault_vaccinations').where({ id: row.id }).update({ vaccine_key: key });
    }
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1].id;
  }
}
