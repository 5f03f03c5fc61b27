/**
 * Deterministic document analysis: the same text always gives the same result, with no model
 * and no network. Counts, reading time (238 words per minute, the adult silent-reading average),
 * Markdown or underlined headings, key terms by frequency without stop words, links, e-mail
 * addresses and dates in ISO, day-month-year and month-name forms (days that are on the calendar).
 */
import { dayExists } from '../../../shared/dates.js';

const WORDS_PER_MINUTE = 238;
/** The most headings, links, e-mail addresses and dates an analysis lists; `<list>_total` counts them all. */
export const MAX_LISTED = 50;

const STOP_WORDS = new Set(
  ('a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down ' +
    'during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself ' +
    'no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    'also may might must shall us via per etc').split(' '),
);

const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec';

export interface DocumentAnalysis {
  characters: number;
  words: number;
  sentences: number;
  paragraphs: number;
  reading_time_minutes: number;
  headings: Array<{ level: number; text: string }>;
  headings_total: number;
  headings_truncated: boolean;
  key_terms: Array<{ term: string; count: number }>;
  links: string[];
  links_total: number;
  links_truncated: boolean;
  email_addresses: string[];
  email_addresses_total: number;
  email_addresses_truncated: boolean;
  dates: string[];
  dates_total: number;
  dates_truncated: boolean;
}

/** The first MAX_LISTED of `values` as `<name>`, with `<name>_total` and `<name>_truncated`. */
function listed<Name extends string, Value>(name: Name, values: Value[]) {
  return { [name]: values.slice(0, MAX_LISTED), [`${name}_total`]: values.length, [`${name}_truncated`]: values.length > MAX_LISTED } as
    { [K in Name]: Value[] } & { [K in `${Name}_total`]: number } & { [K in `${Name}_truncated`]: boolean };
}

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

export function analyzeText(text: string): DocumentAnalysis {
  const normalised = text.replace(/\r\n?/g, '\n');
  const lines = normalised.split('\n');

  const headings: DocumentAnalysis['headings'] = [];
  lines.forEach((line, i) => {
    const atx = atxHeading(line);
    if (atx) headings.push(atx);
    else if (i > 0 && lines[i - 1].trim() && /^(=+|-+)\s*$/.test(line) && line.trim().length >= 3) {
      headings.push({ level: line.trim().startsWith('=') ? 1 : 2, text: lines[i - 1].trim() });
    }
  });

  const links = unique(normalised.match(/\bhttps?:\/\/[^\s<>()"'\]]+[^\s<>()"'\].,;:!?]/g) ?? []);
  const emails = unique(emailAddresses(normalised).map((e) => e.toLowerCase()));
  const datePattern = new RegExp(
    `\\b\\d{4}-\\d{2}-\\d{2}\\b|\\b\\d{1,2}[./]\\d{1,2}[./]\\d{4}\\b|\\b\\d{1,2}\\s+(?:${MONTHS})\\.?\\s+\\d{4}\\b|\\b(?:${MONTHS})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}\\b`,
    'gi',
  );
  const dates = unique((normalised.match(datePattern) ?? []).filter(isCalendarDate));

  // Words: letters or digits with inner apostrophes or hyphens; links and addresses are not prose.
  const prose = normalised.replace(/\bhttps?:\/\/\S+/g, ' ').replace(/(?<!\S)\S+@\S+/g, ' ').replace(/^#{1,6}\s+/gm, '');
  const words = prose.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [];
  const body = prose.replace(/^(=+|-+)\s*$/gm, '').trim();
  const sentences = body ? body.split(/(?<=[.!?])\s+|\n{2,}/).filter((s) => /[\p{L}\p{N}]/u.test(s)).length : 0;
  const paragraphs = normalised.split(/\n\s*\n/).filter((p) => p.trim()).length;

  const counts = new Map<string, number>();
  for (const word of words) {
    const term = word.toLowerCase().replace(/’/g, "'");
    if (term.length < 3 || STOP_WORDS.has(term) || /^\d+$/.test(term)) continue;
    counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  const key_terms = [...counts.entries()]
    .filter(([, count]) => count >= 2 || counts.size <= 10)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, 10)
    .map(([term, count]) => ({ term, count }));

  return {
    characters: normalised.length,
    words: words.length,
    sentences,
    paragraphs,
    reading_time_minutes: words.length ? Math.max(1, Math.ceil(words.length / WORDS_PER_MINUTE)) : 0,
    ...listed('headings', headings),
    key_terms,
    ...listed('links', links),
    ...listed('email_addresses', emails),
    ...listed('dates', dates),
  };
}

const MONTH_NUMBERS = new Map(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].map((name, i) => [name, i + 1]));

/**
 * Whether a date the pattern found is a day on the calendar: 2026-02-30, 31.04.2026 and 30 February
 * 2026 look like dates and are not. Day and month in figures are read either way round (3/12/2026
 * is 3 December or 12 March), so a date is refused only when neither reading exists.
 */
function isCalendarDate(found: string): boolean {
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(found);
  if (iso) return dayExists(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const figures = /^(\d{1,2})[./](\d{1,2})[./](\d{4})$/.exec(found);
  if (figures) {
    const [first, second, year] = figures.slice(1).map(Number);
    return dayExists(year, second, first) || dayExists(year, first, second);
  }
  const day = Number(/\d{1,2}(?!\d)/.exec(found)![0]);
  const year = Number(/\d{4}$/.exec(found)![0]);
  const month = MONTH_NUMBERS.get(/[a-z]{3}/i.exec(found)![0].toLowerCase())!;
  return dayExists(year, month, day);
}

/*
 * Linear-time forms of patterns that backtracked super-linearly on ordinary input (a long heading
 * line of spaces, a long dotted or base64 token): the analysis runs on the event loop, where a
 * quadratic or cubic pattern over a 500,000-character document stops the whole server.
 */

/**
 * An ATX heading ("## Title ##"): one to six hashes, a space, the text without closing hashes
 * and spaces; scanned by hand, as /^(#{1,6})\s+(.+?)\s*#*\s*$/ backtracks cubically on a long
 * line of spaces.
 */
function atxHeading(line: string): { level: number; text: string } | undefined {
  let level = 0;
  while (line[level] === '#') level += 1;
  if (level < 1 || level > 6 || !SPACE.test(line[level] ?? '')) return undefined;
  const text = line.slice(level).trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end -= 1;
  const title = text.slice(0, end).trimEnd();
  return title ? { level, text: title } : undefined;
}

const SPACE = /\s/;
const LOCAL_CHAR = /[A-Za-z0-9._%+-]/;
const WORD_CHAR = /[A-Za-z0-9_]/;
const EMAIL_AT = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/y;

/**
 * What /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g finds, in linear time: a match's local
 * part is the run of local characters just before an "@", from the run's first word boundary (the
 * leftmost start), so each "@" is tried once, from one start.
 */
function emailAddresses(text: string): string[] {
  const found: string[] = [];
  let from = 0;
  while (from < text.length) {
    const at = text.indexOf('@', from);
    if (at < 0) break;
    let start = at;
    while (start > from && LOCAL_CHAR.test(text[start - 1])) start -= 1;
    while (start < at && !(WORD_CHAR.test(text[start]) !== (start > 0 && WORD_CHAR.test(text[start - 1])))) start += 1;
    if (start < at) {
      EMAIL_AT.lastIndex = start;
      const match = EMAIL_AT.exec(text);
      if (match) {
        found.push(match[0]);
        from = EMAIL_AT.lastIndex;
        continue;
      }
    }
    from = at + 1;
  }
  return found;
}
