/**
 * describeDatabaseFailure (db/errors.ts) puts a database's refusal in an operator's words, by its
 * code: a PostgreSQL SQLSTATE (five digits and capitals) or a SQLite code. Node's own system
 * errors also carry five-capital codes (EPERM, EROFS, EPIPE, EBADF, EXDEV); the CLIs pass every
 * failure through it (the admin CLI's events file beside a SQLite database, for one), and such an
 * error is not the database refusing a command: its own message, naming the file, is kept.
 */
import test from 'ava';
import { describeDatabaseFailure } from '../../../db/errors.js';

const systemError = (code: string) => Object.assign(new Error(`${code}: operation failed, open '/srv/portico/data/portico.sqlite-events'`), { code, syscall: 'open' });

test('a Node system error is not described as the database refusing a command', (t) => {
  for (const code of ['EPERM', 'EROFS', 'EPIPE', 'EBADF', 'EXDEV', 'ENXIO']) {
    t.is(describeDatabaseFailure(systemError(code)), undefined, code);
  }
});

test('PostgreSQL and SQLite codes are still described', (t) => {
  t.is(describeDatabaseFailure(Object.assign(new Error('x'), { code: '42501' })), 'the database user of DATABASE_URL is not allowed to do this (42501)');
  t.is(describeDatabaseFailure(Object.assign(new Error('x'), { code: 'XX001' })), 'the database is damaged (XX001)');
  t.is(describeDatabaseFailure(Object.assign(new Error('x'), { code: 'SQLITE_READONLY' })), 'the database is read-only (SQLITE_READONLY)');
  t.is(describeDatabaseFailure(Object.assign(new Error('x'), { code: 'P0001' })), 'the database refused the command (P0001)');
});
