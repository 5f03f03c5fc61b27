/** Calendar dates, as the MCP products and the console take them. */

/** A calendar date in the form YYYY-MM-DD. */
export const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Epoch ms of a YYYY-MM-DD calendar date (UTC midnight), or undefined for another form or a day
 * that does not exist (Date.UTC and Date.parse roll 2026-02-30 over into March).
 */
export function dateToMs(value: string): number | undefined {
  const match = DATE.exec(value);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return dayExists(year, month, day) ? Date.UTC(year, month - 1, day) : undefined;
}

/** Whether day `day` of month `month` (1-12) of `year` is on the calendar: 2024-02-29 is, 2026-02-29 and 2026-13-01 are not. */
export function dayExists(year: number, month: number, day: number): boolean {
  if (!Number.isInteger(month) || month < 1 || month > 12 || !Number.isInteger(day) || day < 1) return false;
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  return back.getUTCFullYear() === year && back.getUTCMonth() === month - 1 && back.getUTCDate() === day;
}
