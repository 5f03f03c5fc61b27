/**
 * Small helpers product code shares: keyset pagination, text matching, names, ISO 4217 money in
 * integer minor units, calendar dates and the wire form of times. Nothing here touches a tenant:
 * callers pass queries that a TenantScope already filtered.
 */
import type { Knex } from 'knex';
import { z } from 'zod';
import { DATE, dateToMs } from '../../shared/dates.js';
import { AppError } from '../../shared/errors.js';
import { UNSHOWABLE, UNSHOWABLE_RULE } from '../../shared/unshowable.js';

/** The columns a product writes through TenantScope.insert, which stamps tenant_id (and id unless given). */
export type NewRow<Row> = Omit<Row, 'id' | 'tenant_id'> & { id?: string };

// ---------------------------------------------------------------- pagination

const DEFAULT_PAGE = 25;
const MAX_PAGE = 100;

/** The `limit` and `cursor` arguments every list tool takes. */
export const pageArgs = {
  limit: z.number().int().min(1).max(MAX_PAGE).optional().describe(`How many records to return (1-${MAX_PAGE}, default ${DEFAULT_PAGE}).`),
  cursor: z.string().min(1).max(200).optional().describe('The next_cursor of the previous page, to continue a listing.'),
};

export interface Page<T> {
  items: T[];
  /** Pass as `cursor` to get the next page; null on the last page. */
  next_cursor: string | null;
}

const CURSOR_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The largest value of an integer (int4) column: a cursor key above it is none of ours. */
export const INT4_MAX = 2 ** 31 - 1;

/**
 * A cursor's key and record id, refused as `invalid_arguments` unless it could be one this server
 * issued: an integer key from `minKey` (0: a time or a count) up to `maxKey` and a record id (a
 * UUID). Anything else (a key past the column's type, U+0000 in the id) would reach the SQL and
 * fail there as `internal`.
 */
export function decodeCursor(cursor: string, maxKey = Number.MAX_SAFE_INTEGER, minKey = 0): { at: number; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'number' && Number.isSafeInteger(at) && at >= minKey && at <= maxKey && typeof id === 'string' && CURSOR_ID.test(id)) return { at, id };
  } catch {
    // fall through: any undecodable cursor is the caller's mistake, answered below
  }
  throw new AppError('invalid_arguments', 'cursor: not a cursor this server returned', { details: { field: 'cursor' } });
}

export function encodeCursor(key: number, id: string): string {
  return Buffer.from(JSON.stringify([key, id])).toString('base64url');
}

/**
 * Highest `column` first (default: newest `created_at`), ties by id, continuing after the cursor.
 * Keyset pagination, so a record created while a client pages cannot shift or repeat what it sees.
 */
export async function pageOf<Row extends { id: string }>(
  query: Knex.QueryBuilder,
  table: string,
  args: { limit?: number; cursor?: string },
  column = 'created_at',
  /** The largest key the column holds: epoch ms by default, INT4_MAX for an integer column. */
  maxKey = Number.MAX_SAFE_INTEGER,
  /** The smallest: 0 for a time, EARLIEST_DATE for a calendar date (one before 1970 is negative). */
  minKey = 0,
): Promise<Page<Row>> {
  const limit = args.limit ?? DEFAULT_PAGE;
  if (args.cursor) {
    const after = decodeCursor(args.cursor, maxKey, minKey);
    query.where((q) =>
      q.where(`${table}.${column}`, '<', after.at).orWhere((same) => same.where(`${table}.${column}`, after.at).andWhere(`${table}.id`, '<', after.id)));
  }
  const rows = (await query
    .orderBy([{ column: `${table}.${column}`, order: 'desc' }, { column: `${table}.id`, order: 'desc' }])
    .limit(limit + 1)) as Row[];
  const items = rows.slice(0, limit);
  const last = items.at(-1) as (Row & Record<string, unknown>) | undefined;
  const next_cursor = rows.length > limit && last ? encodeCursor(Number(last[column]), last.id) : null;
  return { items, next_cursor };
}

// ---------------------------------------------------------------- text matching

/** LIKE wildcards in user text match themselves, with ESCAPE '\' written out (SQLite has no default escape). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * SQL folding `expression` (a `??` or `?` placeholder) for a case-insensitive comparison. Both
 * sides of a comparison are folded by the database, never one of them by JavaScript: PostgreSQL's
 * lower() is not JavaScript's ('İ' is 'i' there and 'i' + U+0307 here, 'ΟΔΟΣ' ends in 'σ' there
 * and 'ς' here), so the exact spelling missed itself. The two places where lower()
 * implementations differ, final sigma and the dot of 'İ', are then made one, so a lower-case
 * spelling finds the same records on SQLite (JavaScript's lower(), db/sqlite_client.ts) and
 * PostgreSQL (libc's or ICU's).
 */
function foldedSql(expression: string): string {
  return `replace(replace(lower(${expression}), '\u03c2', '\u03c3'), 'i\u0307', 'i')`;
}

/**
 * `text` folded as foldedSql folds it on SQLite (JavaScript's lower(), then final sigma and the
 * dot of 'İ' made one): the folding of nameKey, the key a name is unique under, so that a plain
 * unique index enforces it on both databases, also between two writes at the same time.
 * An index on foldedSql itself would hang on SQLite's lower(), which db/sqlite_client.ts replaces
 * per connection.
 */
function foldedKey(text: string): string {
  return text.toLowerCase().replaceAll('\u03c2', '\u03c3').replaceAll('i\u0307', 'i');
}

/** Case-insensitive "column contains text": the same SQL on SQLite and PostgreSQL. */
export function whereContains(query: Knex.QueryBuilder, column: string, text: string): Knex.QueryBuilder {
  return query.whereRaw(`${foldedSql('??')} like ${foldedSql('?')} escape '\\'`, [column, `%${escapeLike(text)}%`]);
}

/** Case-insensitive "column equals text", folded as whereContains folds. */
export function whereEqualsFolded(query: Knex.QueryBuilder, column: string, text: string): Knex.QueryBuilder {
  return query.whereRaw(`${foldedSql('??')} = ${foldedSql('?')}`, [column, text]);
}

// ---------------------------------------------------------------- names

/**
 * A name as every product stores it: Unicode NFC (an accent sent as a combining mark is the
 * precomposed letter, so the two spellings are one name), each run of white space (a tab, a line
 * break, a no-break space, two spaces) one space, none at either end.
 */
function normalizeName(text: string): string {
  return text.normalize('NFC').replace(/\s+/g, ' ').trim();
}

/**
 * The key a name is unique under (terrain's workflows, reclaim's policies) or grouped by
 * (pawvault's vaccines): the name normalised, then case-folded, so names that differ only in case,
 * spacing or Unicode composition are one name.
 */
export function nameKey(name: string): string {
  return foldedKey(normalizeName(name));
}

/**
 * A name, title or other one-line label, and the text a filter looks for in one: normalised
 * (normalizeName) before its length is counted, so `max` counts what is stored, in UTF-16 code
 * units as every text argument does (never more characters than a column of that width holds).
 * Control and format characters left once white space is one space (zero-width and bidirectional
 * marks, escapes) are refused: a name is shown to people and models as it is stored, and those
 * make it read as another one.
 */
export function nameArg(max: number) {
  return z.string().overwrite(normalizeName).min(1).max(max)
    .refine((name) => !UNSHOWABLE.test(name), UNSHOWABLE_RULE);
}

// ---------------------------------------------------------------- money

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export const currencyArg = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be a three-letter ISO 4217 code in upper case, e.g. EUR')
  .refine((code) => CURRENCIES.has(code), 'is not an ISO 4217 currency code')
  .describe('ISO 4217 currency code, upper case (e.g. EUR, USD, JPY).');

/** Amounts are integers in the currency's minor unit (cents for EUR, yen for JPY). */
const MAX_MINOR = 1_000_000_000_000; // 10 billion in a two-decimal currency

export function minorArg(what: string) {
  return z.number().int().min(0).max(MAX_MINOR).describe(`${what}, as an integer in the currency's minor unit (e.g. cents: 1999 = 19.99 EUR).`);
}

/** Digits after the decimal point of a currency (EUR 2, JPY 0, KWD 3). */
function minorDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/** "1234.50 EUR": exact, from integer minor units, without floating point. */
export function formatMoney(minor: number, currency: string): string {
  const digits = minorDigits(currency);
  const negative = minor < 0;
  const text = String(Math.abs(minor)).padStart(digits + 1, '0');
  const whole = digits ? text.slice(0, -digits) : text;
  const fraction = digits ? `.${text.slice(-digits)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction} ${currency}`;
}

// ---------------------------------------------------------------- dates and times


/**
 * The earliest calendar date dateArg takes, 0100-01-01, as epoch ms (negative): the smallest key
 * of a date column (dateToMs refuses years 0000-0099, which Date.UTC reads as 19xx).
 */
export const EARLIEST_DATE = Date.UTC(100, 0, 1);

/** The latest calendar date a YYYY-MM-DD date can say, 9999-12-31, as epoch ms. */
export const LATEST_DATE = Date.UTC(9999, 11, 31);

/** A calendar date argument, YYYY-MM-DD, that must exist (no 2026-02-30). */
export const dateArg = z
  .string()
  .regex(DATE, 'must be a date in the form YYYY-MM-DD')
  .refine((value) => dateToMs(value) !== undefined, 'is not a calendar date');

export { dateToMs };

export function msToDate(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString().slice(0, 10);
}

/** Times leave the server as ISO 8601 UTC strings; they are stored as epoch milliseconds. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : isoOf(Number(ms));
}

const isoMemo = new Map<number, string>();
const ISO_MEMO_SIZE = 4_096;

/**
 * `ms` as ISO 8601 UTC. A listing formats the same stored times on every call (forge's, the
 * benchmark's tool, four per call), and formatting a Date was ~1 % of a loaded server: the last
 * few thousand are kept.
 */
export function isoOf(ms: number): string {
  let text = isoMemo.get(ms);
  if (text === undefined) {
    text = new Date(ms).toISOString();
    if (isoMemo.size >= ISO_MEMO_SIZE) isoMemo.clear();
    isoMemo.set(ms, text);
  }
  return text;
}

/** An instant argument: ISO 8601 with a time zone (e.g. 2026-11-01T12:00:00Z). */
export const instantArg = z
  .string()
  .max(40)
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/, 'must be an ISO 8601 date-time with a time zone, e.g. 2026-11-01T12:00:00Z')
  // Date.parse rolls a day that does not exist over into the next month (2026-02-30 → 2026-03-02):
  // the calendar date must exist, as for dateArg.
  .refine((value) => !Number.isNaN(Date.parse(value)) && dateToMs(value.slice(0, 10)) !== undefined, 'is not a valid date-time');

/** A trimmed text argument that may span lines (a message, a body, a summary): its lines and spacing are kept. */
export function textArg(max: number) {
  return z.string().trim().min(1).max(max);
}

export const DAY_MS = 86_400_000;

/**
 * Whether the call's grant holds `scope`. A prompt or resource declares one scope; when it would
 * also show data that another scope guards (a deal's quotes, a scan's findings), it shows that
 * part only to grants that hold the other scope too, as the matching tool would.
 */
export function granted(context: { connection: { scopes: ReadonlySet<string> } }, scope: string): boolean {
  return context.connection.scopes.has(scope);
}

/**
 * `record` as the grant may see it: each part that another scope guards (`guarded`: part → scope)
 * and the grant does not hold is left out, and `<part>_omitted` names the scope that shows it.
 * Tools, resources and prompts that show the same record use the same guards.
 */
export function asGranted(context: { connection: { scopes: ReadonlySet<string> } }, record: object, guarded: Record<string, string>): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...record };
  for (const [part, scope] of Object.entries(guarded)) {
    if (granted(context, scope)) continue;
    delete shown[part];
    shown[`${part}_omitted`] = `reading ${part.replaceAll('_', ' ')} needs the scope ${scope}`;
  }
  return shown;
}

/**
 * The fields of `patch` that are given (not undefined) and differ from `row`'s: what an update
 * writes. None, and the update writes nothing (updated_at stays when it was).
 */
export function changedFields<Patch extends object>(row: object, patch: Patch): Partial<Patch> {
  return Object.fromEntries(Object.entries(patch).filter(([key, value]) => value !== undefined && value !== (row as Record<string, unknown>)[key])) as Partial<Patch>;
}

/**
 * A record embedded in a prompt under its resource's URI, as `resources/read` of that URI returns
 * it: the record with its `uri`. What a client is given under a URI is what reading it gives.
 */
export function embeddedResource(uri: string, record: object) {
  return { type: 'resource' as const, resource: { uri, mimeType: 'application/json', text: JSON.stringify({ ...record, uri }) } };
}
