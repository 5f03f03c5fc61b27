import type { Knex } from 'knex';
import { dialectOf } from '../connect.js';

/**
 * harvest_reports.subject_search holds the subject lower-cased, which can be longer than the
 * subject itself ('İ' lower-cases to two characters): on PostgreSQL a 200-character subject could
 * overflow varchar(200) and the call failed as `internal`. SQLite does not enforce the length, so
 * only PostgreSQL's column changes.
 */
export async function up(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'postgres') {
    await knex.raw('alter table harvest_reports alter column subject_search type text');
  }
}

export async function down(knex: Knex): Promise<void> {
  if (dialectOf(knex) === 'postgres') {
    await knex.raw('alter table harvest_reports alter column subject_search type varchar(200)');
  }
}
