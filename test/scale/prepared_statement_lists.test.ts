/**
 * A statement whose text grows with a list (`in (?, ?, …)` of the revocation sweep, the
 * multi-row insert of an audit batch on the transaction path) has a new text for every length.
 * Kept prepared, each length stays in the memory of every pooled connection it ran on for as
 * long as the connection lives: the sweep runs every second over the connections of the open
 * sessions (up to 500 ids a statement), the audit batches on PostgreSQL's transaction path hold
 * up to 200 records a statement, and a long-running instance meets every length. Such texts run
 * unnamed past a few parameters; short ones stay prepared.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { writeBatch, type BatchedAudit } from '../../db/audit.js';
import { revokedAmong } from '../../db/grant_store.js';
import { migrateLatest } from '../../db/migrate.js';
import { statementNamer } from '../../db/pg_client.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;

/** Bytes PostgreSQL holds for this connection's cached statements and plans. */
async function cachedPlanBytes(trx: Knex.Transaction): Promise<number> {
  const { rows } = await trx.raw<{ rows: Array<{ bytes: string | null }> }>("select sum(total_bytes)::bigint as bytes from pg_backend_memory_contexts where name like 'CachedPlan%'");
  return Number(rows[0].bytes ?? 0);
}

pgTest('lists of every length leave a bounded set of prepared statements on a connection [postgres]', async (t) => {
  const database = await createTestDatabase('postgres');
  const db = database.connect();
  try {
    await migrateLatest(db);
    // One transaction: one pooled connection, whose prepared statements are what is measured.
    await db.transaction(async (trx) => {
      const before = await cachedPlanBytes(trx);
      const ids = Array.from({ length: 500 }, (_, i) => `connection-${i}`);
      for (let n = 1; n <= 500; n += 1) await revokedAmong(trx, ids.slice(0, n));
      const record = (i: number): BatchedAudit => ({ tenantId: null, kind: 'admin', name: 'test.batch', args: { i }, outcome: 'ok' });
      for (let n = 1; n <= 60; n += 1) await writeBatch(trx, Array.from({ length: n }, (_, i) => record(i)));
      const grown = (await cachedPlanBytes(trx)) - before;
      const { rows } = await trx.raw<{ rows: Array<{ n: number }> }>("select count(*)::int as n from pg_prepared_statements where statement not like '%pg_%'");
      t.log(`${rows[0].n} prepared statements, ${(grown / 1048576).toFixed(1)} MiB of cached plans`);
      t.true(rows[0].n < 100, `${rows[0].n} statements prepared on one connection`);
      t.true(grown < 8 * 1048576, `${(grown / 1048576).toFixed(1)} MiB held by one connection's prepared statements`);
    });
  } finally {
    await db.destroy();
    await database.drop();
  }
});

test('a text with more than 32 parameters runs unnamed; up to 32 it is named', (t) => {
  const name = statementNamer();
  const list = (n: number) => `select "id" from "connections" where "id" in (${Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ')})`;
  t.regex(name(list(1)) ?? '', /^p_/);
  t.regex(name(list(32)) ?? '', /^p_/);
  t.is(name(list(33)), undefined);
  t.is(name(list(500)), undefined);
  t.is(name(list(32)), name(list(32)), 'the named ones keep their names');
});
