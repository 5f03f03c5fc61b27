/**
 * cavalier's data: deals, quotes (with line items) and statements of work (with milestones),
 * all through a TenantScope, so every read and write is limited to the grant's tenant.
 * Money is integer minor units; totals are computed here, never taken from the caller.
 */
import { AppError } from '../../../shared/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS, dateToMs, formatMoney, iso, msToDate, pageOf, whereContains, type NewRow, type Page } from '../common.js';

export const QUOTE_STATUSES = ['draft', 'sent', 'accepted', 'rejected'] as const;
export type QuoteStatus = (typeof QUOTE_STATUSES)[number];
/** draft → sent → accepted | rejected; accepted and rejected are final. */
const QUOTE_TRANSITIONS: Record<QuoteStatus, readonly QuoteStatus[]> = {
  draft: ['sent'],
  sent: ['accepted', 'rejected'],
  accepted: [],
  rejected: [],
};
/** The customer's answer, which ends a quote for good: recorded by cavalier.record_quote_decision (destructive). */
export const QUOTE_DECISIONS = ['accepted', 'rejected'] as const satisfies readonly QuoteStatus[];
/** What cavalier.update_quote_status may ask for: the moves that leave a quote open. */
export const OPEN_QUOTE_STATUSES = ['draft', 'sent'] as const satisfies readonly QuoteStatus[];

export const DEAL_STAGES = ['lead', 'qualified', 'proposal', 'won', 'lost'] as const;
export type DealStage = (typeof DEAL_STAGES)[number];
/** One step forward at a time, or lost from any open stage; won and lost are final. */
const DEAL_TRANSITIONS: Record<DealStage, readonly DealStage[]> = {
  lead: ['qualified', 'lost'],
  qualified: ['proposal', 'lost'],
  proposal: ['won', 'lost'],
  won: [],
  lost: [],
};
/** The stages that close a deal for good: reached only through cavalier.close_deal (destructive). */
export const DEAL_OUTCOMES = ['won', 'lost'] as const satisfies readonly DealStage[];
/** What cavalier.update_deal_stage and create_deal may ask for: the stages of a deal still open. */
export const OPEN_DEAL_STAGES = ['lead', 'qualified', 'proposal'] as const satisfies readonly DealStage[];
/** How many of a deal's quotes and statements of work (each, newest first) the deal shows. */
export const DEAL_RECORDS_SHOWN = 100;
/** A statement of work is written for a deal at proposal stage or one already won. */
const SOW_DEAL_STAGES: readonly DealStage[] = ['proposal', 'won'];

export const SOW_STATUSES = ['draft', 'signed', 'completed'] as const;
export type SowStatus = (typeof SOW_STATUSES)[number];
const SOW_TRANSITIONS: Record<SowStatus, readonly SowStatus[]> = { draft: ['signed'], signed: ['completed'], completed: [] };
/** What cavalier.update_sow_status may ask for; completed is final and is cavalier.complete_sow's (destructive). */
export const OPEN_SOW_STATUSES = ['draft', 'signed'] as const satisfies readonly SowStatus[];

export interface DbDealRow {
  id: string;
  tenant_id: string;
  title: string;
  customer: string;
  stage: DealStage;
  currency: string;
  value_minor: number;
  expected_close_at: number | null;
  notes: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
}

export interface DbQuoteRow {
  id: string;
  tenant_id: string;
  deal_id: string | null;
  customer: string;
  currency: string;
  status: QuoteStatus;
  tax_rate_bp: number;
  subtotal_minor: number;
  tax_minor: number;
  total_minor: number;
  valid_until: number | null;
  notes: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
  decided_at: number | null;
}

export interface DbQuoteLineRow {
  id: string;
  tenant_id: string;
  quote_id: string;
  position: number;
  description: string;
  quantity: number;
  unit_price_minor: number;
  amount_minor: number;
}

export interface DbSowRow {
  id: string;
  tenant_id: string;
  deal_id: string;
  title: string;
  scope_summary: string;
  status: SowStatus;
  currency: string;
  total_minor: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface DbMilestoneRow {
  id: string;
  tenant_id: string;
  sow_id: string;
  position: number;
  title: string;
  due_date: string;
  amount_minor: number;
}

export interface LineItemInput {
  description: string;
  quantity: number;
  unit_price_minor: number;
}

export interface QuoteTotals {
  lines: Array<LineItemInput & { amount_minor: number }>;
  subtotal_minor: number;
  tax_minor: number;
  total_minor: number;
}

/**
 * quantity × unit price per line, their sum, tax rounded half up to the minor unit, total.
 * BigInt so that no intermediate product loses precision.
 */
function computeQuoteTotals(items: readonly LineItemInput[], taxRateBp: number): QuoteTotals {
  const lines = items.map((item) => ({ ...item, amount: BigInt(item.quantity) * BigInt(item.unit_price_minor) }));
  const subtotal = lines.reduce((sum, line) => sum + line.amount, 0n);
  const tax = (subtotal * BigInt(taxRateBp) + 5_000n) / 10_000n;
  const total = subtotal + tax;
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new AppError('invalid_arguments', 'line_items: the quote total is too large', { details: { field: 'line_items' } });
  }
  return {
    lines: lines.map(({ amount, ...item }) => ({ ...item, amount_minor: Number(amount) })),
    subtotal_minor: Number(subtotal),
    tax_minor: Number(tax),
    total_minor: Number(total),
  };
}

/**
 * A date-only value (stored as UTC midnight) that a new record commits to must be today or later:
 * an offer already expired, a close already missed or a milestone already late is a typo or a
 * back-dating, never a plan. `field` is the argument's wire name.
 */
function refusePastDate(field: string, ms: number, rule: string): void {
  if (ms < startOfToday()) throw new AppError('invalid_arguments', `${field}: ${msToDate(ms)} has passed; ${rule}`, { details: { field } });
}

function refuseTransition(entity: string, field: string, from: string, to: string, allowed: readonly string[]): never {
  const next = allowed.length ? `it can move to ${allowed.join(' or ')}` : `${from} is final`;
  throw new AppError('conflict', `the ${entity} is ${from} and cannot move to ${to}: ${next}`, { details: { field, from, to, allowed } });
}

function refuseDealMove(row: DbDealRow, stage: DealStage): void {
  if (!DEAL_TRANSITIONS[row.stage].includes(stage)) refuseTransition('deal', 'stage', row.stage, stage, DEAL_TRANSITIONS[row.stage]);
}

function refuseSowMove(row: DbSowRow, status: SowStatus): void {
  if (!SOW_TRANSITIONS[row.status].includes(status)) refuseTransition('statement of work', 'status', row.status, status, SOW_TRANSITIONS[row.status]);
}

/**
 * The rules of a quote's move beyond its transition table, given its deal's stage (undefined: no
 * deal): the refusal, or undefined when the move is allowed.
 */
function quoteRuleRefusal(row: DbQuoteRow, status: QuoteStatus, dealStage: DealStage | undefined): AppError | undefined {
  // Nothing more is offered on a lost deal (create_quote): its quotes are not sent, nor
  // accepted, any more; rejecting one still records what happened.
  if ((status === 'sent' || status === 'accepted') && dealStage === 'lost') {
    return new AppError('conflict', `the deal ${row.deal_id} was lost; its quotes can no longer be ${status}, only rejected`, { details: { field: 'quote_id', deal_stage: dealStage } });
  }
  // An offer past its last valid day can be rejected, not accepted.
  if (status === 'accepted' && row.valid_until !== null && Number(row.valid_until) < startOfToday()) {
    return new AppError('conflict', `the quote expired on ${msToDate(Number(row.valid_until))}; create a new quote to accept`, { details: { valid_until: msToDate(Number(row.valid_until)) } });
  }
  return undefined;
}

/**
 * The rules of a quote's move to `status`; `dealOf` reads its deal (locked, by the move itself),
 * only when a rule needs it. Returns the deal's stage when it was read.
 */
async function refuseQuoteMove(row: DbQuoteRow, status: QuoteStatus, dealOf: (dealId: string) => Promise<DbDealRow | undefined>): Promise<DealStage | undefined> {
  if (!QUOTE_TRANSITIONS[row.status].includes(status)) refuseTransition('quote', 'status', row.status, status, QUOTE_TRANSITIONS[row.status]);
  const dealStage = (status === 'sent' || status === 'accepted') && row.deal_id !== null ? (await dealOf(row.deal_id))?.stage : undefined;
  const refusal = quoteRuleRefusal(row, status, dealStage);
  if (refusal) throw refusal;
  return dealStage;
}

/** The statuses a quote may move to now: its transition table less the moves the rules refuse (a lost deal, an expired offer). */
function nextQuoteStatuses(row: DbQuoteRow, dealStage: DealStage | undefined): QuoteStatus[] {
  return QUOTE_TRANSITIONS[row.status].filter((status) => !quoteRuleRefusal(row, status, dealStage));
}

function refuseQuoteDelete(row: DbQuoteRow): void {
  if (row.status === 'accepted') {
    throw new AppError('conflict', 'the quote was accepted by the customer and is kept as a record; it cannot be deleted', { details: { field: 'quote_id' } });
  }
}

// ---------------------------------------------------------------- views (the wire form)

function dealView(row: DbDealRow) {
  return {
    id: row.id,
    title: row.title,
    customer: row.customer,
    stage: row.stage,
    currency: row.currency,
    value_minor: Number(row.value_minor),
    value: formatMoney(Number(row.value_minor), row.currency),
    expected_close_date: msToDate(row.expected_close_at),
    notes: row.notes,
    next_stages: DEAL_TRANSITIONS[row.stage],
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    closed_at: iso(row.closed_at),
  };
}

/** A quote as the tools show it; `dealStage`: its deal's (undefined: no deal), which decides what it may move to next. */
function quoteSummaryView(row: DbQuoteRow, dealStage: DealStage | undefined) {
  return {
    id: row.id,
    deal_id: row.deal_id,
    customer: row.customer,
    currency: row.currency,
    status: row.status,
    tax_rate_percent: row.tax_rate_bp / 100,
    subtotal_minor: Number(row.subtotal_minor),
    tax_minor: Number(row.tax_minor),
    total_minor: Number(row.total_minor),
    total: formatMoney(Number(row.total_minor), row.currency),
    valid_until: msToDate(row.valid_until),
    next_statuses: nextQuoteStatuses(row, dealStage),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    sent_at: iso(row.sent_at),
    decided_at: iso(row.decided_at),
  };
}

function quoteView(row: DbQuoteRow, lines: DbQuoteLineRow[], dealStage: DealStage | undefined) {
  return {
    ...quoteSummaryView(row, dealStage),
    notes: row.notes,
    line_items: lines.map((line) => ({
      position: line.position,
      description: line.description,
      quantity: Number(line.quantity),
      unit_price_minor: Number(line.unit_price_minor),
      amount_minor: Number(line.amount_minor),
    })),
  };
}

function sowSummaryView(row: DbSowRow) {
  return {
    id: row.id,
    deal_id: row.deal_id,
    title: row.title,
    status: row.status,
    currency: row.currency,
    total_minor: Number(row.total_minor),
    total: formatMoney(Number(row.total_minor), row.currency),
    next_statuses: SOW_TRANSITIONS[row.status],
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function sowView(row: DbSowRow, milestones: DbMilestoneRow[]) {
  return {
    ...sowSummaryView(row),
    scope_summary: row.scope_summary,
    milestones: milestones.map((m) => ({ position: m.position, title: m.title, due_date: m.due_date, amount_minor: Number(m.amount_minor) })),
  };
}

export type DealView = ReturnType<typeof dealView>;
export type QuoteView = ReturnType<typeof quoteView>;
export type SowView = ReturnType<typeof sowView>;

// ---------------------------------------------------------------- repository

export interface NewDeal {
  title: string;
  customer: string;
  currency: string;
  value_minor: number;
  stage?: DealStage;
  expected_close_at?: number | null;
  notes?: string | null;
  created_by?: string;
}

export interface NewQuote {
  deal_id?: string;
  customer?: string;
  currency: string;
  tax_rate_bp: number;
  line_items: LineItemInput[];
  valid_until?: number | null;
  notes?: string | null;
  created_by?: string;
}

export interface NewSow {
  deal_id: string;
  title: string;
  scope_summary: string;
  milestones: Array<{ title: string; due_date: string; amount_minor: number }>;
  created_by?: string;
}

export function cavalierRepository(scope: TenantScope) {
  const now = () => Date.now();

  async function quoteLines(quoteId: string): Promise<DbQuoteLineRow[]> {
    return scope.from<DbQuoteLineRow>('cavalier_quote_lines').where('quote_id', quoteId).orderBy('position');
  }

  async function milestonesOf(sowId: string): Promise<DbMilestoneRow[]> {
    return scope.from<DbMilestoneRow>('cavalier_sow_milestones').where('sow_id', sowId).orderBy('position');
  }

  async function newestOfDeal<Row extends { id: string }>(table: string, dealId: string): Promise<{ rows: Row[]; total: number; truncated: boolean }> {
    const rows = (await scope.from<Row>(table).where('deal_id', dealId)
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(DEAL_RECORDS_SHOWN + 1)) as Row[];
    if (rows.length <= DEAL_RECORDS_SHOWN) return { rows, total: rows.length, truncated: false };
    const counted = (await scope.from(table).where('deal_id', dealId).count({ n: '*' }).first()) as { n: number | string } | undefined;
    return { rows: rows.slice(0, DEAL_RECORDS_SHOWN), total: Number(counted?.n ?? 0), truncated: true };
  }

  /**
   * The deal a new quote or statement of work is for, locked FOR SHARE and read as it is now: a
   * close committed while this call waited is seen (nothing is added to a lost deal), and one that
   * comes later waits for the record this call adds.
   */
  async function requireDealAsItIs(rawId: string): Promise<DbDealRow> {
    return scope.requireLocked<DbDealRow>('cavalier_deals', rawId, 'deal', 'share');
  }

  /** The stage of each quote's deal (undefined: no deal), in the order of `quotes`, in one query. */
  async function dealStagesOf(quotes: readonly DbQuoteRow[]): Promise<Array<DealStage | undefined>> {
    const ids = [...new Set(quotes.flatMap((quote) => (quote.deal_id === null ? [] : [quote.deal_id])))];
    const deals = ids.length ? ((await scope.from<DbDealRow>('cavalier_deals').whereIn('cavalier_deals.id', ids).select('id', 'stage')) as Array<Pick<DbDealRow, 'id' | 'stage'>>) : [];
    const stages = new Map(deals.map((deal) => [deal.id, deal.stage]));
    return quotes.map((quote) => (quote.deal_id === null ? undefined : stages.get(quote.deal_id)));
  }

  /** The stage of a quote's deal (undefined: no deal). */
  async function dealStageOf(quote: DbQuoteRow): Promise<DealStage | undefined> {
    return (await dealStagesOf([quote]))[0];
  }

  const deals = {
    async list(filter: { stage?: DealStage; customer?: string; limit?: number; cursor?: string }): Promise<Page<DealView>> {
      const query = scope.from('cavalier_deals');
      if (filter.stage) query.where('stage', filter.stage);
      if (filter.customer) whereContains(query, 'customer', filter.customer);
      const page = await pageOf<DbDealRow>(query, 'cavalier_deals', filter);
      return { items: page.items.map(dealView), next_cursor: page.next_cursor };
    },

    /**
     * The deal with its newest DEAL_RECORDS_SHOWN quotes and statements of work, each list with its
     * total and whether it was cut: a deal may collect any number of quotes, and list_quotes and
     * list_sows (deal_id) page through all of them.
     */
    async get(rawId: string) {
      const row = await scope.require<DbDealRow>('cavalier_deals', rawId, 'deal');
      const quotes = await newestOfDeal<DbQuoteRow>('cavalier_quotes', row.id);
      const sows = await newestOfDeal<DbSowRow>('cavalier_sows', row.id);
      return {
        ...dealView(row),
        quotes: quotes.rows.map((quote) => quoteSummaryView(quote, row.stage)), quotes_total: quotes.total, quotes_truncated: quotes.truncated,
        sows: sows.rows.map(sowSummaryView), sows_total: sows.total, sows_truncated: sows.truncated,
      };
    },

    async create(input: NewDeal): Promise<DealView> {
      if (input.expected_close_at != null) refusePastDate('expected_close_date', input.expected_close_at, 'a new deal must be expected to close today or later');
      const at = now();
      const stage = input.stage ?? 'lead';
      const row = await scope.insert<NewRow<DbDealRow>>('cavalier_deals', {
        title: input.title,
        customer: input.customer,
        stage,
        currency: input.currency,
        value_minor: input.value_minor,
        expected_close_at: input.expected_close_at ?? null,
        notes: input.notes ?? null,
        created_by: input.created_by ?? null,
        created_at: at,
        updated_at: at,
        closed_at: stage === 'won' || stage === 'lost' ? at : null,
      });
      return dealView(row as DbDealRow);
    },

    async setStage(rawId: string, stage: DealStage): Promise<DealView & { previous_stage: DealStage }> {
      const row = await scope.require<DbDealRow>('cavalier_deals', rawId, 'deal');
      refuseDealMove(row, stage);
      const at = now();
      const patch = { stage, updated_at: at, closed_at: stage === 'won' || stage === 'lost' ? at : null };
      // Guarded by the stage read above, so two concurrent moves cannot both apply.
      const changed = await scope.from('cavalier_deals').where({ id: row.id, stage: row.stage }).update(patch);
      if (!changed) throw new AppError('conflict', 'the deal changed while this call ran; read it again');
      return { ...dealView({ ...row, ...patch }), previous_stage: row.stage };
    },

    /** What setStage would refuse, refused without changing anything (before a confirmation is asked for). */
    async checkStage(rawId: string, stage: DealStage): Promise<void> {
      refuseDealMove(await scope.require<DbDealRow>('cavalier_deals', rawId, 'deal'), stage);
    },
  };

  const quotes = {
    async list(filter: { status?: QuoteStatus; deal_id?: string; customer?: string; limit?: number; cursor?: string }) {
      const query = scope.from('cavalier_quotes');
      if (filter.status) query.where('status', filter.status);
      if (filter.deal_id) query.where('deal_id', (await scope.require<DbDealRow>('cavalier_deals', filter.deal_id, 'deal')).id);
      if (filter.customer) whereContains(query, 'customer', filter.customer);
      const page = await pageOf<DbQuoteRow>(query, 'cavalier_quotes', filter);
      const stages = await dealStagesOf(page.items);
      return { items: page.items.map((row, i) => quoteSummaryView(row, stages[i])), next_cursor: page.next_cursor };
    },

    async get(rawId: string): Promise<QuoteView> {
      const row = await scope.require<DbQuoteRow>('cavalier_quotes', rawId, 'quote');
      return quoteView(row, await quoteLines(row.id), await dealStageOf(row));
    },

    /** The quote a statement of work for the deal is based on: the newest accepted one, else the newest. */
    async basisOf(dealId: string): Promise<QuoteView | undefined> {
      const newest = (status?: QuoteStatus) => {
        const query = scope.from<DbQuoteRow>('cavalier_quotes').where('deal_id', dealId);
        if (status) query.where('status', status);
        return query.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first() as Promise<DbQuoteRow | undefined>;
      };
      const row = (await newest('accepted')) ?? (await newest());
      return row && quoteView(row, await quoteLines(row.id), await dealStageOf(row));
    },

    async create(input: NewQuote): Promise<QuoteView> {
      let dealId: string | null = null;
      let dealStage: DealStage | undefined;
      let customer = input.customer;
      if (input.deal_id) {
        const deal = await requireDealAsItIs(input.deal_id);
        if (deal.currency !== input.currency) {
          throw new AppError('invalid_arguments', `currency: the deal is in ${deal.currency}; a quote for it must be too`, { details: { field: 'currency' } });
        }
        // A lost deal is closed: nothing more is offered on it (a won one may still get a change quote).
        if (deal.stage === 'lost') throw new AppError('conflict', `the deal ${deal.id} was lost; a quote needs an open or won deal`, { details: { stage: deal.stage } });
        dealId = deal.id;
        dealStage = deal.stage;
        customer ??= deal.customer;
      }
      if (!customer) throw new AppError('invalid_arguments', 'customer: required unless deal_id is given', { details: { field: 'customer' } });
      if (input.valid_until != null) refusePastDate('valid_until', input.valid_until, 'an offer must be valid today or later');
      const totals = computeQuoteTotals(input.line_items, input.tax_rate_bp);
      const at = now();
      const row = (await scope.insert<NewRow<DbQuoteRow>>('cavalier_quotes', {
        deal_id: dealId,
        customer,
        currency: input.currency,
        status: 'draft',
        tax_rate_bp: input.tax_rate_bp,
        subtotal_minor: totals.subtotal_minor,
        tax_minor: totals.tax_minor,
        total_minor: totals.total_minor,
        valid_until: input.valid_until ?? null,
        notes: input.notes ?? null,
        created_by: input.created_by ?? null,
        created_at: at,
        updated_at: at,
        sent_at: null,
        decided_at: null,
      })) as DbQuoteRow;
      const lines: DbQuoteLineRow[] = [];
      for (const [index, line] of totals.lines.entries()) {
        lines.push((await scope.insert<NewRow<DbQuoteLineRow>>('cavalier_quote_lines', {
          quote_id: row.id, position: index + 1, ...line,
        })) as DbQuoteLineRow);
      }
      return quoteView(row, lines, dealStage);
    },

    async setStatus(rawId: string, status: QuoteStatus): Promise<QuoteView & { previous_status: QuoteStatus }> {
      // Locked first and read as it is now: a move committed while this call waited is refused as
      // a move from the status it left, a quote deleted meanwhile is not_found.
      const row = await scope.requireLocked<DbQuoteRow>('cavalier_quotes', rawId, 'quote');
      // The deal is read as it is now, locked FOR SHARE as create_quote locks it, so a close waits for this move.
      const dealStage = await refuseQuoteMove(row, status, (dealId) => scope.lock<DbDealRow>('cavalier_deals', dealId, 'share'));
      const at = now();
      const patch: Partial<DbQuoteRow> = { status, updated_at: at, ...(status === 'sent' ? { sent_at: at } : { decided_at: at }) };
      await scope.update('cavalier_quotes', row.id, patch);
      // The deal was read for a move to sent, the one status that has moves after it.
      return { ...quoteView({ ...row, ...patch }, await quoteLines(row.id), dealStage), previous_status: row.status };
    },

    /** What setStatus would refuse, refused without locking or changing anything (before a confirmation is asked for). */
    async checkStatus(rawId: string, status: QuoteStatus): Promise<void> {
      const row = await scope.require<DbQuoteRow>('cavalier_quotes', rawId, 'quote');
      await refuseQuoteMove(row, status, (dealId) => scope.from<DbDealRow>('cavalier_deals').where('cavalier_deals.id', dealId).first() as Promise<DbDealRow | undefined>);
    },

    /** Accepted quotes are commercial commitments and are kept; anything else may be deleted. */
    async delete(rawId: string) {
      // Locked first and read as it is now: a decision recorded meanwhile is seen, and an accepted quote kept.
      const row = await scope.requireLocked<DbQuoteRow>('cavalier_quotes', rawId, 'quote');
      refuseQuoteDelete(row);
      const lines = await scope.from('cavalier_quote_lines').where('quote_id', row.id).delete();
      await scope.delete('cavalier_quotes', row.id);
      return { deleted: true, id: row.id, customer: row.customer, status: row.status, line_items_deleted: lines, total: formatMoney(Number(row.total_minor), row.currency) };
    },

    /** What delete would refuse, refused without locking or changing anything (before a confirmation is asked for). */
    async checkDelete(rawId: string): Promise<void> {
      refuseQuoteDelete(await scope.require<DbQuoteRow>('cavalier_quotes', rawId, 'quote'));
    },
  };

  const sows = {
    async list(filter: { deal_id?: string; status?: SowStatus; limit?: number; cursor?: string }) {
      const query = scope.from('cavalier_sows');
      if (filter.deal_id) query.where('deal_id', (await scope.require<DbDealRow>('cavalier_deals', filter.deal_id, 'deal')).id);
      if (filter.status) query.where('status', filter.status);
      const page = await pageOf<DbSowRow>(query, 'cavalier_sows', filter);
      return { items: page.items.map(sowSummaryView), next_cursor: page.next_cursor };
    },

    async get(rawId: string): Promise<SowView> {
      const row = await scope.require<DbSowRow>('cavalier_sows', rawId, 'statement of work');
      return sowView(row, await milestonesOf(row.id));
    },

    async create(input: NewSow): Promise<SowView> {
      const deal = await requireDealAsItIs(input.deal_id);
      if (!SOW_DEAL_STAGES.includes(deal.stage)) {
        throw new AppError('conflict', `the deal is at stage ${deal.stage}; a statement of work needs a deal at ${SOW_DEAL_STAGES.join(' or ')}`, {
          details: { field: 'deal_id', stage: deal.stage },
        });
      }
      let previousDue = -Infinity;
      for (const [index, m] of input.milestones.entries()) {
        const field = `milestones.${index}.due_date`;
        const due = dateToMs(m.due_date);
        if (due === undefined) throw new AppError('invalid_arguments', `${field}: is not a calendar date`, { details: { field } });
        refusePastDate(field, due, 'the milestones of a new statement of work fall due today or later');
        // Milestones are given in delivery order: one due before the milestone it follows is a slip of the list.
        if (due < previousDue) {
          throw new AppError('invalid_arguments', `${field}: ${m.due_date} is before milestone ${index}'s due date; give the milestones in delivery order`, { details: { field } });
        }
        previousDue = due;
      }
      const total = input.milestones.reduce((sum, m) => sum + m.amount_minor, 0);
      if (!Number.isSafeInteger(total)) throw new AppError('invalid_arguments', 'milestones: the total is too large', { details: { field: 'milestones' } });
      const at = now();
      const row = (await scope.insert<NewRow<DbSowRow>>('cavalier_sows', {
        deal_id: deal.id,
        title: input.title,
        scope_summary: input.scope_summary,
        status: 'draft',
        currency: deal.currency,
        total_minor: total,
        created_by: input.created_by ?? null,
        created_at: at,
        updated_at: at,
      })) as DbSowRow;
      const milestones: DbMilestoneRow[] = [];
      for (const [index, m] of input.milestones.entries()) {
        milestones.push((await scope.insert<NewRow<DbMilestoneRow>>('cavalier_sow_milestones', {
          sow_id: row.id, position: index + 1, title: m.title, due_date: m.due_date, amount_minor: m.amount_minor,
        })) as DbMilestoneRow);
      }
      return sowView(row, milestones);
    },

    async setStatus(rawId: string, status: SowStatus): Promise<SowView & { previous_status: SowStatus }> {
      const row = await scope.require<DbSowRow>('cavalier_sows', rawId, 'statement of work');
      refuseSowMove(row, status);
      const patch = { status, updated_at: now() };
      const changed = await scope.from('cavalier_sows').where({ id: row.id, status: row.status }).update(patch);
      if (!changed) throw new AppError('conflict', 'the statement of work changed while this call ran; read it again');
      return { ...sowView({ ...row, ...patch }, await milestonesOf(row.id)), previous_status: row.status };
    },

    /** What setStatus would refuse, refused without changing anything (before a confirmation is asked for). */
    async checkStatus(rawId: string, status: SowStatus): Promise<void> {
      refuseSowMove(await scope.require<DbSowRow>('cavalier_sows', rawId, 'statement of work'), status);
    },
  };

  return { deals, quotes, sows };
}

export type CavalierRepository = ReturnType<typeof cavalierRepository>;

/** Midnight UTC today: a date-only value (valid_until) is valid through its whole day. */
function startOfToday(): number {
  const at = Date.now();
  return at - (at % DAY_MS);
}
