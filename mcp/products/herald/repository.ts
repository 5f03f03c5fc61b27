/**
 * herald's data: subscribers, broadcasts (draft → scheduled → sent) and trust-center documents
 * (draft ⇄ published). Every query goes through the tenant scope; a transition locks its record
 * first, so two concurrent calls cannot both move it, nor count from the same version.
 */
import { AppError } from '../../../shared/errors.js';
import { translate } from '../../../db/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { changedFields, iso, pageOf, type NewRow, type Page } from '../common.js';

export const SEGMENTS = ['customers', 'partners', 'internal'] as const;
export const AUDIENCES = ['everyone', ...SEGMENTS] as const;
export const BROADCAST_STATUSES = ['draft', 'scheduled', 'sent'] as const;
export const DOCUMENT_CATEGORIES = ['policy', 'certification', 'report', 'subprocessors', 'faq'] as const;
export const DOCUMENT_STATUSES = ['draft', 'published'] as const;
export const VISIBILITIES = ['public', 'nda'] as const;

export type Segment = (typeof SEGMENTS)[number];
export type Audience = (typeof AUDIENCES)[number];
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];
export type DocumentCategory = (typeof DOCUMENT_CATEGORIES)[number];
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];
export type Visibility = (typeof VISIBILITIES)[number];

export interface DbSubscriberRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string | null;
  segment: Segment;
  created_at: number;
  unsubscribed_at: number | null;
}

export interface DbBroadcastRow {
  id: string;
  tenant_id: string;
  title: string;
  body: string;
  audience: Audience;
  status: BroadcastStatus;
  scheduled_for: number | null;
  sent_at: number | null;
  sent_by: string | null;
  recipients_count: number | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface DbDocumentRow {
  id: string;
  tenant_id: string;
  title: string;
  category: DocumentCategory;
  visibility: Visibility;
  body: string;
  status: DocumentStatus;
  version: number;
  published_at: number | null;
  published_by: string | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

const SUBSCRIBERS = 'herald_subscribers';
const BROADCASTS = 'herald_broadcasts';
const DOCUMENTS = 'herald_documents';

function subscriberView(row: DbSubscriberRow) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    segment: row.segment,
    subscribed_at: iso(row.created_at),
    unsubscribed_at: iso(row.unsubscribed_at),
  };
}

function broadcastView(row: DbBroadcastRow) {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    audience: row.audience,
    status: row.status,
    scheduled_for: iso(row.scheduled_for),
    sent_at: iso(row.sent_at),
    sent_by: row.sent_by,
    recipients_count: row.recipients_count,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function documentView(row: DbDocumentRow) {
  return {
    id: row.id,
    title: row.title,
    category: row.category,
    visibility: row.visibility,
    body: row.body,
    status: row.status,
    version: row.version,
    published_at: iso(row.published_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export type SubscriberView = ReturnType<typeof subscriberView>;
export type BroadcastView = ReturnType<typeof broadcastView>;
export type DocumentView = ReturnType<typeof documentView>;

function refuseBroadcastMove(row: DbBroadcastRow, from: BroadcastStatus[], refusal: (status: BroadcastStatus) => string): void {
  if (!from.includes(row.status)) throw new AppError('conflict', `broadcast ${row.id} is ${row.status}; ${refusal(row.status)}`, { details: { status: row.status } });
}

function refuseDocumentMove(row: DbDocumentRow, from: DocumentStatus, refusal: string): void {
  if (row.status !== from) throw new AppError('conflict', `document ${row.id} is ${row.status}; ${refusal}`, { details: { status: row.status } });
}

const SEND_FROM: BroadcastStatus[] = ['scheduled'];
const sendRefusal = (status: BroadcastStatus) =>
  status === 'draft' ? 'schedule it first (herald.schedule_broadcast); only a scheduled broadcast can be sent' : 'a sent broadcast cannot be sent again';
const UNPUBLISH_REFUSAL = 'only a published document can be unpublished';

export function heraldRepository(scope: TenantScope) {
  async function requireBroadcast(rawId: string): Promise<DbBroadcastRow> {
    return scope.require<DbBroadcastRow>(BROADCASTS, rawId, 'broadcast');
  }

  async function requireDocument(rawId: string): Promise<DbDocumentRow> {
    return scope.require<DbDocumentRow>(DOCUMENTS, rawId, 'document');
  }

  /**
   * Moves a broadcast from one of `from` to a new state, or explains why it cannot. Locked first
   * and read as it is now: calls moving the same broadcast take turns, and each decides on, and
   * computes its change from, what the one before left.
   */
  async function transitionBroadcast(
    rawId: string, from: BroadcastStatus[], change: (row: DbBroadcastRow) => Partial<DbBroadcastRow> | Promise<Partial<DbBroadcastRow>>, refusal: (status: BroadcastStatus) => string,
  ): Promise<DbBroadcastRow> {
    const row = await scope.requireLocked<DbBroadcastRow>(BROADCASTS, rawId, 'broadcast');
    refuseBroadcastMove(row, from, refusal);
    const changes = changedFields(row, await change(row));
    if (!Object.keys(changes).length) return row;
    const patch = { ...changes, updated_at: Date.now() };
    await scope.update(BROADCASTS, row.id, patch);
    return { ...row, ...patch };
  }

  /** As transitionBroadcast: a publish counts its version from the one the last publish left. */
  async function transitionDocument(rawId: string, from: DocumentStatus, change: (row: DbDocumentRow) => Partial<DbDocumentRow>, refusal: string): Promise<DbDocumentRow> {
    const row = await scope.requireLocked<DbDocumentRow>(DOCUMENTS, rawId, 'document');
    refuseDocumentMove(row, from, refusal);
    const changes = changedFields(row, change(row));
    if (!Object.keys(changes).length) return row;
    const patch = { ...changes, updated_at: Date.now() };
    await scope.update(DOCUMENTS, row.id, patch);
    return { ...row, ...patch };
  }

  return {
    subscribers: {
      async list(filter: { segment?: Segment; include_unsubscribed?: boolean; limit?: number; cursor?: string }): Promise<Page<SubscriberView>> {
        const query = scope.from(SUBSCRIBERS);
        if (filter.segment) query.where('segment', filter.segment);
        if (!filter.include_unsubscribed) query.whereNull('unsubscribed_at');
        const page = await pageOf<DbSubscriberRow>(query, SUBSCRIBERS, filter);
        return { items: page.items.map(subscriberView), next_cursor: page.next_cursor };
      },

      async add(input: { email: string; name?: string; segment: Segment }): Promise<SubscriberView> {
        const email = input.email.trim().toLowerCase();
        const existing = await scope.from<DbSubscriberRow>(SUBSCRIBERS).where('email', email).first();
        // A person who unsubscribed said no: only they can say yes again, not an administrator.
        if (existing?.unsubscribed_at != null) {
          throw new AppError('conflict', `${email} unsubscribed on ${iso(existing.unsubscribed_at)!.slice(0, 10)}; Herald does not add back a person who unsubscribed`, {
            details: { subscriber_id: existing.id, unsubscribed_at: iso(existing.unsubscribed_at) },
          });
        }
        const row = await translate(
          () => scope.insert<NewRow<DbSubscriberRow>>(SUBSCRIBERS, { email, name: input.name ?? null, segment: input.segment, created_at: Date.now(), unsubscribed_at: null }),
          { conflict: `${email} is already a subscriber` },
        );
        return subscriberView(row);
      },

      /** Active subscribers an audience reaches right now. */
      async countAudience(audience: Audience): Promise<number> {
        const query = scope.from(SUBSCRIBERS).whereNull('unsubscribed_at');
        if (audience !== 'everyone') query.where('segment', audience);
        const result = (await query.count({ count: '*' }).first()) as { count: number | string } | undefined;
        return Number(result?.count ?? 0);
      },
    },

    broadcasts: {
      async list(filter: { status?: BroadcastStatus; audience?: Audience; limit?: number; cursor?: string }): Promise<Page<BroadcastView>> {
        const query = scope.from(BROADCASTS);
        if (filter.status) query.where('status', filter.status);
        if (filter.audience) query.where('audience', filter.audience);
        const page = await pageOf<DbBroadcastRow>(query, BROADCASTS, filter);
        return { items: page.items.map(broadcastView), next_cursor: page.next_cursor };
      },

      async get(rawId: string): Promise<BroadcastView> {
        return broadcastView(await requireBroadcast(rawId));
      },

      async create(input: { title: string; body: string; audience: Audience }, userId: string): Promise<BroadcastView> {
        const now = Date.now();
        const row = await scope.insert<NewRow<DbBroadcastRow>>(BROADCASTS, {
          title: input.title, body: input.body, audience: input.audience, status: 'draft' as const,
          scheduled_for: null, sent_at: null, sent_by: null, recipients_count: null, created_by: userId, created_at: now, updated_at: now,
        });
        return broadcastView(row);
      },

      async update(rawId: string, patch: { title?: string; body?: string; audience?: Audience }): Promise<BroadcastView> {
        const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
        return broadcastView(await transitionBroadcast(rawId, ['draft'], () => changes, () => 'only a draft can be edited (unschedule a scheduled broadcast first; a sent one is final)'));
      },

      async schedule(rawId: string, at: number): Promise<BroadcastView> {
        if (at <= Date.now()) throw new AppError('invalid_arguments', 'send_at: must be in the future', { details: { field: 'send_at' } });
        return broadcastView(await transitionBroadcast(rawId, ['draft'], () => ({ status: 'scheduled', scheduled_for: at }), () => 'only a draft can be scheduled'));
      },

      async unschedule(rawId: string): Promise<BroadcastView> {
        return broadcastView(await transitionBroadcast(rawId, ['scheduled'], () => ({ status: 'draft', scheduled_for: null }), () => 'only a scheduled broadcast can be returned to draft'));
      },

      async send(rawId: string, userId: string, recipients: (audience: Audience) => Promise<number>): Promise<BroadcastView> {
        return broadcastView(await transitionBroadcast(
          rawId, SEND_FROM,
          async (row) => ({ status: 'sent', sent_at: Date.now(), sent_by: userId, recipients_count: await recipients(row.audience) }),
          sendRefusal,
        ));
      },

      /** What send would refuse, refused without locking or changing anything (before a confirmation is asked for). */
      async checkSend(rawId: string): Promise<void> {
        refuseBroadcastMove(await requireBroadcast(rawId), SEND_FROM, sendRefusal);
      },
    },

    documents: {
      async list(filter: { status?: DocumentStatus; category?: DocumentCategory; visibility?: Visibility; limit?: number; cursor?: string }): Promise<Page<DocumentView>> {
        const query = scope.from(DOCUMENTS);
        if (filter.status) query.where('status', filter.status);
        if (filter.category) query.where('category', filter.category);
        if (filter.visibility) query.where('visibility', filter.visibility);
        const page = await pageOf<DbDocumentRow>(query, DOCUMENTS, filter);
        return { items: page.items.map(documentView), next_cursor: page.next_cursor };
      },

      async get(rawId: string): Promise<DocumentView> {
        return documentView(await requireDocument(rawId));
      },

      async create(input: { title: string; category: DocumentCategory; visibility: Visibility; body: string }, userId: string): Promise<DocumentView> {
        const now = Date.now();
        const row = await scope.insert<NewRow<DbDocumentRow>>(DOCUMENTS, {
          ...input, status: 'draft' as const, version: 0, published_at: null, published_by: null, created_by: userId, created_at: now, updated_at: now,
        });
        return documentView(row);
      },

      async update(rawId: string, patch: { title?: string; category?: DocumentCategory; visibility?: Visibility; body?: string }): Promise<DocumentView> {
        const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
        return documentView(await transitionDocument(rawId, 'draft', () => changes, 'only a draft can be edited (unpublish it first)'));
      },

      async publish(rawId: string, userId: string): Promise<DocumentView> {
        return documentView(await transitionDocument(
          rawId, 'draft', (row) => ({ status: 'published', version: Number(row.version) + 1, published_at: Date.now(), published_by: userId }), 'it is already published',
        ));
      },

      async unpublish(rawId: string): Promise<DocumentView> {
        return documentView(await transitionDocument(rawId, 'published', () => ({ status: 'draft', published_at: null, published_by: null }), UNPUBLISH_REFUSAL));
      },

      /** What unpublish would refuse, refused without locking or changing anything (before a confirmation is asked for). */
      async checkUnpublish(rawId: string): Promise<void> {
        refuseDocumentMove(await requireDocument(rawId), 'published', UNPUBLISH_REFUSAL);
      },
    },
  };
}

export type HeraldRepository = ReturnType<typeof heraldRepository>;
