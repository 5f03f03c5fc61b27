/**
 * Newest-first listings keyed by (time, id), paginated by keyset both ways: constant cost per page
 * however deep, and a page reached by a cursor shows the same rows however many arrive meanwhile.
 * The audit log and the console's connections use it.
 */
import type { Knex } from 'knex';

/** A place in a listing: the rows older than (time, id), or with `newer` the rows newer than it. */
export interface KeysetCursor {
  time: number;
  id: string;
  newer?: boolean;
}

/** Opaque to callers. The older form is unchanged, so cursors issued before there was a way back still work. */
export function encodeCursor(key: { time: number; id: string }, newer = false): string {
  return Buffer.from(`${newer ? 'n' : ''}${key.time}.${key.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): KeysetCursor | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(n?)(\d{1,16})\.([0-9a-f-]{36})$/.exec(text);
  return match ? { time: Number(match[2]), id: match[3], newer: match[1] === 'n' } : undefined;
}

export interface KeysetPage<Row> {
  rows: Row[];
  /** Continues with older rows. */
  next?: string;
  /** Goes back to newer rows: only on a page reached by a cursor. */
  previous?: string;
}

/**
 * One page of `query` (already filtered), newest first by `columns`. Newer rows are read upwards
 * from the cursor (the nearest first), then shown newest first. A page reached by a cursor has a
 * way back as long as the listing is not empty beyond it.
 */
export async function newestFirstPage<Row>(
  query: Knex.QueryBuilder,
  columns: { time: string; id: string },
  page: { limit: number; cursor?: KeysetCursor },
  keyOf: (row: Row) => { time: number; id: string },
): Promise<KeysetPage<Row>> {
  const newer = page.cursor?.newer === true;
  if (page.cursor) {
    const { time, id } = page.cursor;
    const beyond = newer ? '>' : '<';
    query.where((q) => q.where(columns.time, beyond, time).orWhere((q2) => q2.where(columns.time, time).andWhere(columns.id, beyond, id)));
  }
  const order = newer ? 'asc' : 'desc';
  const rows: Row[] = await query.orderBy([{ column: columns.time, order }, { column: columns.id, order }]).limit(page.limit + 1);
  const more = rows.length > page.limit;
  if (more) rows.pop();
  if (newer) rows.reverse();
  const hasOlder = newer ? rows.length > 0 : more;
  const hasNewer = newer ? more : page.cursor !== undefined && rows.length > 0;
  return {
    rows,
    next: hasOlder ? encodeCursor(keyOf(rows[rows.length - 1])) : undefined,
    previous: hasNewer ? encodeCursor(keyOf(rows[0]), true) : undefined,
  };
}
