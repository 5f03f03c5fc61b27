/**
 * Two transactions of PostgreSQL taking the same rows in opposite orders: PostgreSQL ends one of
 * them as a deadlock (40P01). What the caller of that one is told is a clash with another writer
 * (`conflict`: nothing changed, try again), not `internal`; so is a serialization failure (40001).
 */
import test from 'ava';
import { createMigratedDatabase, databasesUnderTest } from '../helpers/db.js';
import { createTenant } from '../../db/accounts.js';
import { translateDbError } from '../../db/errors.js';

const onPostgres = databasesUnderTest().includes('postgres') ? test : test.skip;

onPostgres('a deadlock PostgreSQL breaks is a conflict to the call it ends, not internal', async (t) => {
  const { db, drop } = await createMigratedDatabase('postgres');
  try {
    const [a, b] = [await createTenant(db, { slug: 'acme', name: 'Acme' }), await createTenant(db, { slug: 'globex', name: 'Globex' })];
    // Each takes its second row only once both hold their first: then they wait for each other.
    let holding = 0;
    let bothHold!: () => void;
    const crossed = new Promise<void>((resolve) => (bothHold = resolve));
    const crossing = (first: string, second: string) => db.transaction(async (trx) => {
      await trx('tenants').where({ id: first }).update({ name: trx.ref('name') });
      if (++holding === 2) bothHold();
      await crossed;
      await trx('tenants').where({ id: second }).update({ name: trx.ref('name') });
    });
    const outcomes = await Promise.allSettled([crossing(a.id, b.id), crossing(b.id, a.id)]);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    t.is(failed.length, 1, 'PostgreSQL ended one of the two');
    t.is((failed[0].reason as { code?: string }).code, '40P01');
    const error = translateDbError(failed[0].reason);
    t.is(error.code, 'conflict');
    t.regex(error.message, /at the same time/);
    t.is(translateDbError(Object.assign(new Error('could not serialize access'), { code: '40001' })).code, 'conflict');
  } finally {
    await drop();
  }
});
