/** Database errors become domain errors here, and only here. The driver's text stays in `cause`. */
import { AppError, isAppError } from '../shared/errors.js';

interface DriverError {
  code?: string;
  errno?: number;
  message?: string;
}

export function isUniqueViolation(error: unknown): boolean {
  const e = error as DriverError;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    (e?.code === 'SQLITE_CONSTRAINT' && /UNIQUE|PRIMARY KEY/.test(e.message ?? ''));
}

function isForeignKeyViolation(error: unknown): boolean {
  const e = error as DriverError;
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    (e?.code === 'SQLITE_CONSTRAINT' && /FOREIGN KEY/.test(e.message ?? ''));
}

/** PostgreSQL broke a deadlock (40P01) or a serialization failure (40001) by ending this transaction: another writer won. */
export function isWriteClash(error: unknown): boolean {
  const code = (error as DriverError)?.code;
  return code === '40P01' || code === '40001';
}

/** PostgreSQL cancelled the statement: its statement_timeout (the read pipe's DATABASE_READ_TIMEOUT_MS) or a cancel request. */
export function isCancelledStatement(error: unknown): boolean {
  return (error as DriverError)?.code === '57014';
}

/** What a call sees of a statement PostgreSQL cancelled: a time-out (504), with nothing changed. */
export function statementTimedOut(cause: unknown): AppError {
  return new AppError('timeout', 'the database took too long to answer; nothing was changed', { cause });
}

export function isUnavailable(error: unknown): boolean {
  const e = error as DriverError;
  // SQLite's extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE …) are the same condition.
  // PostgreSQL: connection failures (08…), shut down or killed (57P0x), too many connections
  // (53300), a lock waited for longer than lock_timeout (55P03), a database not accepting
  // connections (55000 with that message).
  return /^SQLITE_(BUSY|LOCKED)(_|$)/.test(e?.code ?? '') || ['ECONNREFUSED', 'ECONNRESET', '57P01', '57P02', '57P03', '08006', '08003', '08001', '53300', '55P03'].includes(e?.code ?? '') ||
    (e?.code === '55000' && /not currently accepting connections/.test(e?.message ?? '')) ||
    /Knex: Timeout acquiring a connection|Connection terminated|Client has encountered a connection error|Connection ended unexpectedly/.test(e?.message ?? '');
}

/**
 * Runs a database operation and translates a failure. `conflict` names what already exists.
 */
export async function translate<T>(operation: () => Promise<T>, what: { conflict?: string; missing?: string } = {}): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateDbError(error, what);
  }
}

export function translateDbError(error: unknown, what: { conflict?: string; missing?: string } = {}): AppError {
  if (isAppError(error)) return error;
  if (isUniqueViolation(error)) return new AppError('conflict', what.conflict ?? 'already exists', { cause: error });
  if (isForeignKeyViolation(error)) return new AppError('not_found', what.missing ?? 'a referenced record does not exist', { cause: error });
  if (isWriteClash(error)) return new AppError('conflict', 'another call changed the same records at the same time; nothing was changed, try again', { cause: error });
  if (isUnavailable(error)) return new AppError('unavailable', 'the database is unavailable, try again', { cause: error });
  if (isCancelledStatement(error)) return statementTimedOut(error);
  return new AppError('internal', 'internal error', { cause: error });
}

/**
 * A database failure in an operator's words, for the CLIs (which have no log to keep the cause
 * in): what went wrong and the driver's code, never its message, which knex prefixes with the
 * failed statement's SQL. Undefined for an error that is not the database's.
 */
export function describeDatabaseFailure(error: unknown): string | undefined {
  const cause = isAppError(error) && error.cause !== undefined ? error.cause : error;
  const code = (cause as DriverError)?.code;
  // Every SQLSTATE holds a digit; Node's system errors (EPERM, EROFS, EPIPE) are five capitals too.
  if (typeof code !== 'string' || !/^((?=[A-Z]*[0-9])[0-9A-Z]{5}|SQLITE_[A-Z_]+)$/.test(code)) return undefined;
  const problem = DATABASE_PROBLEMS.find(([pattern]) => pattern.test(code))?.[1] ?? 'the database refused the command';
  return `${problem} (${code})`;
}

const DATABASE_PROBLEMS: Array<[RegExp, string]> = [
  [/^42501$/, 'the database user of DATABASE_URL is not allowed to do this'],
  [/^(25006|SQLITE_READONLY.*)$/, 'the database is read-only'],
  [/^3D000$/, 'the database named in DATABASE_URL does not exist'],
  [/^(28000|28P01)$/, 'the database refused the user or password of DATABASE_URL'],
  [/^SQLITE_NOTADB$/, 'the file of DATABASE_URL is not a SQLite database'],
  [/^SQLITE_CANTOPEN$/, 'the SQLite file of DATABASE_URL cannot be opened'],
  [/^(SQLITE_CORRUPT.*|XX001|XX002)$/, 'the database is damaged'],
  [/^(SQLITE_FULL|53100)$/, 'the disk of the database is full'],
  [/^(SQLITE_(BUSY|LOCKED).*|55P03)$/, 'the database is locked by another process; try again'],
  [/^(08...|57P0.|53300)$/, 'the database is unavailable; try again'],
  [/^22001$/, 'a value is longer than the database allows'],
  [/^22021$/, 'a value holds a character the database refuses'],
];
