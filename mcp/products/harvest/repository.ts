/**
 * harvest's data: salvage lots and intelligence reports, through a TenantScope. Report search is
 * plain LIKE over lower-cased copies kept at write time, so it ranks the same on SQLite and
 * PostgreSQL (SQLite's lower() folds only ASCII; JavaScript's toLowerCase folds everything).
 */
import { AppError } from '../../../shared/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { changedFields, escapeLike, formatMoney, iso, pageOf, whereContains, type NewRow, type Page } from '../common.js';

export const CONDITIONS = ['new', 'like_new', 'good', 'fair', 'poor', 'scrap'] as const;
export type Condition = (typeof CONDITIONS)[number];
export const LOT_STATUSES = ['available', 'reserved', 'sold', 'scrapped'] as const;
export type LotStatus = (typeof LOT_STATUSES)[number];
/** Sold and scrapped lots are final: they are records of what happened to the goods. */
const LOT_TRANSITIONS: Record<LotStatus, readonly LotStatus[]> = {
  available: ['reserved', 'sold', 'scrapped'],
  reserved: ['available', 'sold'],
  sold: [],
  scrapped: [],
};
/** The statuses that end a lot for good: reached only through harvest.close_lot (destructive). */
export const LOT_OUTCOMES = ['sold', 'scrapped'] as const satisfies readonly LotStatus[];
/** What harvest.update_lot may set: the statuses of a lot still open. */
export const OPEN_LOT_STATUSES = ['available', 'reserved'] as const satisfies readonly LotStatus[];
export const CONFIDENCES = ['low', 'medium', 'high'] as const;
export type Confidence = (typeof CONFIDENCES)[number];

export interface DbLotRow {
  id: string;
  tenant_id: string;
  item: string;
  description: string | null;
  condition: Condition;
  quantity: number;
  currency: string;
  estimated_value_minor: number;
  location: string | null;
  status: LotStatus;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface DbReportRow {
  id: string;
  tenant_id: string;
  subject: string;
  source: string;
  summary: string;
  confidence: Confidence;
  tags: string;
  subject_search: string;
  summary_search: string;
  observed_at: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

function lotView(row: DbLotRow) {
  return {
    id: row.id,
    item: row.item,
    description: row.description,
    condition: row.condition,
    quantity: Number(row.quantity),
    currency: row.currency,
    estimated_value_minor: Number(row.estimated_value_minor),
    estimated_value: formatMoney(Number(row.estimated_value_minor), row.currency),
    location: row.location,
    status: row.status,
    next_statuses: LOT_TRANSITIONS[row.status],
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function reportView(row: DbReportRow) {
  return {
    id: row.id,
    subject: row.subject,
    source: row.source,
    summary: row.summary,
    confidence: row.confidence,
    tags: tagsOf(row.tags),
    observed_at: iso(row.observed_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export type LotView = ReturnType<typeof lotView>;
export type ReportView = ReturnType<typeof reportView>;

/** Tags are stored lower case as "|a|b|" so that an exact tag is the LIKE pattern "%|a|%". */
function storeTags(tags: readonly string[]): string {
  const unique = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))];
  return unique.length ? `|${unique.join('|')}|` : '';
}

function tagsOf(stored: string): string[] {
  return stored.split('|').filter(Boolean);
}

export interface LotInput {
  item: string;
  description?: string | null;
  condition: Condition;
  quantity: number;
  currency: string;
  estimated_value_minor: number;
  location?: string | null;
  created_by?: string;
}

export type LotPatch = Partial<Omit<LotInput, 'created_by'>> & { status?: LotStatus };

export interface ReportInput {
  subject: string;
  source: string;
  summary: string;
  confidence: Confidence;
  tags: string[];
  observed_at: number;
  created_by?: string;
}

export type ReportPatch = Partial<Omit<ReportInput, 'created_by'>>;

function searchable(input: Partial<ReportInput>): Partial<DbReportRow> {
  return {
    ...(input.subject !== undefined ? { subject: input.subject, subject_search: input.subject.toLowerCase() } : {}),
    ...(input.summary !== undefined ? { summary: input.summary, summary_search: input.summary.toLowerCase() } : {}),
    ...(input.tags !== undefined ? { tags: storeTags(input.tags) } : {}),
    ...(input.source !== undefined ? { source: input.source } : {}),
    ...(input.confidence !== undefined ? { confidence: input.confidence } : {}),
    ...(input.observed_at !== undefined ? { observed_at: input.observed_at } : {}),
  };
}

/** Words of a search query: lower case, without LIKE-irrelevant tag delimiters, at most 8, no repeats. */
function searchTerms(query: string): string[] {
  return [...new Set(query.toLowerCase().replace(/\|/g, ' ').split(/\s+/).filter(Boolean))].slice(0, 8);
}

// Per word: subject 3, exact tag 4 (or part of a tag 2), summary 1; the whole phrase adds 2 in the subject, 1 in the summary.
const WORD_SCORE =
  "(CASE WHEN subject_search LIKE ? ESCAPE '\\' THEN 3 ELSE 0 END)" +
  " + (CASE WHEN tags LIKE ? ESCAPE '\\' THEN 4 WHEN tags LIKE ? ESCAPE '\\' THEN 2 ELSE 0 END)" +
  " + (CASE WHEN summary_search LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END)";
const WORD_MATCHED = "(CASE WHEN subject_search LIKE ? ESCAPE '\\' OR tags LIKE ? ESCAPE '\\' OR summary_search LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END)";
const PHRASE_SCORE = "(CASE WHEN subject_search LIKE ? ESCAPE '\\' THEN 2 ELSE 0 END) + (CASE WHEN summary_search LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END)";

function refuseFinal(row: DbLotRow): void {
  if (LOT_TRANSITIONS[row.status].length === 0) {
    throw new AppError('conflict', `the lot is ${row.status}, which is final; it cannot be changed`, { details: { field: 'lot_id', status: row.status } });
  }
}

function refuseMove(row: DbLotRow, to: LotStatus): void {
  if (to !== row.status && !LOT_TRANSITIONS[row.status].includes(to)) {
    throw new AppError('conflict', `the lot is ${row.status} and cannot move to ${to}: it can move to ${LOT_TRANSITIONS[row.status].join(' or ')}`, {
      details: { field: 'status', from: row.status, to, allowed: LOT_TRANSITIONS[row.status] },
    });
  }
}

function refuseClose(row: DbLotRow, outcome: (typeof LOT_OUTCOMES)[number]): void {
  refuseFinal(row);
  refuseMove(row, outcome);
}

/**
 * Portico keeps no exchange rates, so a new currency relabels nothing: 100.00 EUR must not become
 * 10000 JPY. The caller restates the value in the new currency in the same call, or the change is refused.
 */
function refuseRelabelledValue(row: DbLotRow, patch: LotPatch): void {
  if (patch.currency === undefined || patch.currency === row.currency || patch.estimated_value_minor !== undefined) return;
  throw new AppError(
    'invalid_arguments',
    `estimated_value_minor: changing the currency from ${row.currency} to ${patch.currency} needs the lot's value in ${patch.currency} in the same call; Portico does not convert currencies`,
    { details: { field: 'estimated_value_minor' } },
  );
}

export function harvestRepository(scope: TenantScope) {
  const lots = {
    async list(filter: { status?: LotStatus; condition?: Condition; item?: string; limit?: number; cursor?: string }): Promise<Page<LotView>> {
      const query = scope.from('harvest_lots');
      if (filter.status) query.where('status', filter.status);
      if (filter.condition) query.where('condition', filter.condition);
      if (filter.item) whereContains(query, 'item', filter.item);
      const page = await pageOf<DbLotRow>(query, 'harvest_lots', filter);
      return { items: page.items.map(lotView), next_cursor: page.next_cursor };
    },

    async get(rawId: string): Promise<LotView> {
      return lotView(await scope.require<DbLotRow>('harvest_lots', rawId, 'lot'));
    },

    async create(input: LotInput): Promise<LotView> {
      const at = Date.now();
      const row = await scope.insert<NewRow<DbLotRow>>('harvest_lots', {
        item: input.item, description: input.description ?? null, condition: input.condition, quantity: input.quantity,
        currency: input.currency, estimated_value_minor: input.estimated_value_minor, location: input.location ?? null,
        status: 'available', created_by: input.created_by ?? null, created_at: at, updated_at: at,
      });
      return lotView(row as DbLotRow);
    },

    async update(rawId: string, patch: LotPatch): Promise<LotView & { changed: string[] }> {
      // Locked first and read as it is now: the checks, the fields that change and the answer are
      // of the lot as the calls before this one left it, and as this one stores it.
      const row = await scope.requireLocked<DbLotRow>('harvest_lots', rawId, 'lot');
      refuseFinal(row);
      if (patch.status !== undefined) refuseMove(row, patch.status);
      refuseRelabelledValue(row, patch);
      const changes = changedFields(row, patch);
      if (!Object.keys(changes).length) return { ...lotView(row), changed: [] };
      const next = { ...row, ...changes, updated_at: Date.now() };
      await scope.update('harvest_lots', row.id, { ...changes, updated_at: next.updated_at });
      return { ...lotView(next), changed: Object.keys(changes) };
    },

    /** The lot's last move, sold or scrapped; locked first, as an update is. */
    async close(rawId: string, outcome: (typeof LOT_OUTCOMES)[number]): Promise<LotView & { previous_status: LotStatus }> {
      const row = await scope.requireLocked<DbLotRow>('harvest_lots', rawId, 'lot');
      refuseClose(row, outcome);
      const patch = { status: outcome, updated_at: Date.now() };
      await scope.update('harvest_lots', row.id, patch);
      return { ...lotView({ ...row, ...patch }), previous_status: row.status };
    },

    /** What close would refuse, refused without locking or changing anything (before a confirmation is asked for). */
    async checkClose(rawId: string, outcome: (typeof LOT_OUTCOMES)[number]): Promise<void> {
      refuseClose(await scope.require<DbLotRow>('harvest_lots', rawId, 'lot'), outcome);
    },

    async delete(rawId: string) {
      // Locked first: the answer is the lot as it was deleted, not as read before a change that committed meanwhile.
      const row = await scope.requireLocked<DbLotRow>('harvest_lots', rawId, 'lot');
      if (!(await scope.delete('harvest_lots', row.id))) throw new AppError('not_found', `no lot with id ${row.id}`);
      return { deleted: true, id: row.id, item: row.item, status: row.status };
    },
  };

  const reports = {
    async list(filter: { tag?: string; source?: string; confidence?: Confidence; limit?: number; cursor?: string }): Promise<Page<ReportView>> {
      const query = scope.from('harvest_reports');
      if (filter.tag) query.whereRaw(`tags like ? escape '\\'`, [`%|${escapeLike(filter.tag.trim().toLowerCase())}|%`]);
      if (filter.source) whereContains(query, 'source', filter.source);
      if (filter.confidence) query.where('confidence', filter.confidence);
      const page = await pageOf<DbReportRow>(query, 'harvest_reports', filter);
      return { items: page.items.map(reportView), next_cursor: page.next_cursor };
    },

    async get(rawId: string): Promise<ReportView> {
      return reportView(await scope.require<DbReportRow>('harvest_reports', rawId, 'report'));
    },

    async create(input: ReportInput): Promise<ReportView> {
      const at = Date.now();
      const row = await scope.insert<NewRow<DbReportRow>>('harvest_reports', {
        subject: input.subject, subject_search: input.subject.toLowerCase(), source: input.source,
        summary: input.summary, summary_search: input.summary.toLowerCase(), confidence: input.confidence,
        tags: storeTags(input.tags), observed_at: input.observed_at, created_by: input.created_by ?? null, created_at: at, updated_at: at,
      });
      return reportView(row as DbReportRow);
    },

    async update(rawId: string, patch: ReportPatch): Promise<ReportView & { changed: string[] }> {
      // Locked first and read as it is now: the answer is the report as this call stores it.
      const row = await scope.requireLocked<DbReportRow>('harvest_reports', rawId, 'report');
      const fields = Object.keys(patch).filter((key) => patch[key as keyof ReportPatch] !== undefined);
      if (!fields.length) return { ...reportView(row), changed: [] };
      const changes = { ...searchable(patch), updated_at: Date.now() };
      await scope.update('harvest_reports', row.id, changes);
      return { ...reportView({ ...row, ...changes }), changed: fields };
    },

    /**
     * Reports matching any word of the query in subject, tags or summary (case-insensitive),
     * ranked by how many words matched, then by score, then newest observation first. `field`:
     * the caller's name for the query, which a query without a word is refused as.
     */
    async search(query: string, limit: number, field = 'query'): Promise<Array<ReportView & { score: number; matched_terms: number }>> {
      const terms = searchTerms(query);
      if (!terms.length) throw new AppError('invalid_arguments', `${field}: needs at least one word`, { details: { field } });
      const contains = (text: string) => `%${escapeLike(text)}%`;
      const scoreBindings = terms.flatMap((t) => [contains(t), `%|${escapeLike(t)}|%`, contains(t), contains(t)]);
      const phrase = terms.join(' ');
      const phraseBindings = terms.length > 1 ? [contains(phrase), contains(phrase)] : [];
      const score = [...terms.map(() => WORD_SCORE), ...(terms.length > 1 ? [PHRASE_SCORE] : [])].join(' + ');
      const matched = terms.map(() => WORD_MATCHED).join(' + ');
      const matchedBindings = terms.flatMap((t) => [contains(t), contains(t), contains(t)]);
      const db = scope.db;
      const ranked = scope
        .from('harvest_reports')
        .select('harvest_reports.*', db.raw(`(${score}) as score`, [...scoreBindings, ...phraseBindings]), db.raw(`(${matched}) as matched_terms`, matchedBindings));
      const rows: Array<DbReportRow & { score: number | string; matched_terms: number | string }> = await db
        .from(ranked.as('ranked'))
        .where('matched_terms', '>', 0)
        .orderBy([{ column: 'matched_terms', order: 'desc' }, { column: 'score', order: 'desc' }, { column: 'observed_at', order: 'desc' }, { column: 'id', order: 'asc' }])
        .limit(limit);
      return rows.map((row) => ({ ...reportView(row), score: Number(row.score), matched_terms: Number(row.matched_terms) }));
    },
  };

  return { lots, reports };
}

export type HarvestRepository = ReturnType<typeof harvestRepository>;
