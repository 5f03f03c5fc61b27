/**
 * What a viewer of the console may see and do. Both the HTML pages and the JSON API go through
 * here, so the rules live in one place: tenant admins see the whole tenant, members only their
 * own connections and records; anything in another tenant is forbidden_cross_tenant.
 */
import { AppError } from '../../shared/errors.js';
import type { EventBus } from '../../shared/events.js';
import type { Db } from '../../db/connect.js';
import type { Role } from '../../db/accounts.js';
import { findConnectionView, listConnections, revokeConnection, type ConnectionView } from '../../db/grant_store.js';
import type { KeysetCursor, KeysetPage } from '../../db/keyset.js';
import { appendAudit, decodeCursor, queryAudit, type AuditCursor, type AuditFilter, type DbAuditRow, AUDIT_KINDS, type AuditKind } from '../../db/audit.js';
import { normaliseId } from '../../db/tenant_scope.js';
import { DATE, dateToMs } from '../../shared/dates.js';
import { escapeUnshowable } from '../../shared/unshowable.js';

export interface Viewer {
  userId: string;
  email: string;
  tenant: { id: string; slug: string; name: string };
  role: Role;
  /** Present for bearer-token callers: what the token allows. Sessions may do what the role allows. */
  scopes?: ReadonlySet<string>;
  requestId: string;
  /**
   * Pages: another site started the request (`Sec-Fetch-Site` `cross-site` or `same-site`: its link),
   * so what it references is not the person's own doing, and a record of it says so.
   */
  startedBy?: 'cross-site' | 'same-site';
}

export function requireScope(viewer: Viewer, scope: string): void {
  if (viewer.scopes && !viewer.scopes.has(scope)) {
    throw new AppError('insufficient_scope', `this token lacks the scope ${scope}`, { details: { scope } });
  }
}

/** How many connections a page holds unless asked (`limit`), and at most. */
const CONNECTIONS_PAGE = 100;
const MAX_CONNECTIONS_PAGE = 500;

/** A page of the connections the viewer may see, newest first; `cursor` and `limit` as the API took them. */
export async function connectionsFor(
  db: Db,
  viewer: Viewer,
  options: { includeRevoked?: boolean; limit?: string | string[]; cursor?: string | string[] } = {},
): Promise<KeysetPage<ConnectionView>> {
  requireScope(viewer, 'console.connections.read');
  const { limit, cursor } = pageParams(options, { usual: CONNECTIONS_PAGE, most: MAX_CONNECTIONS_PAGE });
  return listConnections(db, viewer.tenant.id, { userId: viewer.role === 'admin' ? undefined : viewer.userId, includeRevoked: options.includeRevoked, limit, cursor });
}

export async function connectionFor(db: Db, viewer: Viewer, rawId: string): Promise<ConnectionView> {
  requireScope(viewer, 'console.connections.read');
  const id = normaliseId(rawId);
  const connection = id ? await findConnectionView(db, id) : undefined;
  if (!connection) throw new AppError('not_found', 'no such connection');
  if (connection.tenant_id !== viewer.tenant.id) {
    // DESIGN.md §3: answered 403 and audited as such, in the caller's log (never the other tenant's).
    // A link on another site that a signed-in person followed names them too: the record says where it came from.
    await appendAudit(db, {
      tenantId: viewer.tenant.id, userId: viewer.userId, product: 'console', kind: 'auth', name: 'console.connection',
      args: viewer.startedBy ? { connection_id: id, started_by: viewer.startedBy } : { connection_id: id }, outcome: 'forbidden_cross_tenant', requestId: viewer.requestId,
    });
    throw new AppError('forbidden_cross_tenant', 'the connection belongs to another organization');
  }
  if (viewer.role !== 'admin' && connection.user_id !== viewer.userId) throw new AppError('forbidden', "only an admin can see another person's connection");
  return connection;
}

/** Revokes, audits, then tells every instance so live sessions and streams close at once. */
export async function revokeFor(db: Db, events: EventBus, viewer: Viewer, rawId: string): Promise<{ connection: ConnectionView; revoked: boolean }> {
  requireScope(viewer, 'console.connections.write');
  // The write scope is enough to revoke: it does not also need the read scope (docs/console.md).
  const writer = { ...viewer, scopes: undefined };
  const connection = await connectionFor(db, writer, rawId);
  const revoked = await db.transaction((trx) =>
    revokeConnection(trx, connection, { userId: viewer.userId, reason: viewer.scopes ? 'console api' : 'console', requestId: viewer.requestId }));
  await events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
  // Read back, so the answer carries the revocation time as stored (a second revoke shows the same).
  return { connection: await connectionFor(db, writer, rawId), revoked };
}

/** Why connections are revoked, in words, by the reason their audit record gives (others are shown as recorded). */
const REVOCATION_REASONS: Record<string, string> = {
  'console': 'in the console',
  'console api': 'through the console API',
  'client revoked by an operator': 'an operator revoked the application everywhere',
  'client removed by an operator': 'an operator removed the application',
  'tenant suspended': 'the organization was suspended',
  'role changed to member': 'the person is no longer an administrator, which this product requires',
  'membership removed': 'the person left the organization',
  'account disabled': "the person's account was disabled",
  'password reset': "the person's password was reset",
  authorization_code_replay: 'its authorization code was presented a second time, a sign of a stolen code',
  refresh_token_reuse: 'a refresh token it had already replaced was presented again, a sign of a stolen token',
  revoked_by_client: 'the application revoked its own token',
  grant_revoked: 'the authorization server revoked its grant',
  grant_expired: 'its grant reached the end of its lifetime',
};

/**
 * Why a revoked connection was revoked, in words, from the record its revocation wrote
 * (`connection.revoke` or `grant.revoke`); undefined for a live one or a record not found.
 */
export async function revocationReason(db: Db, connection: ConnectionView): Promise<string | undefined> {
  if (!connection.revoked_at) return undefined;
  const record = await db('audit_log')
    .where({ tenant_id: connection.tenant_id, connection_id: connection.id })
    .whereIn('name', ['connection.revoke', 'grant.revoke'])
    .orderBy('time', 'desc')
    .first<{ args_redacted: string | null } | undefined>('args_redacted');
  const reason = record?.args_redacted ? (JSON.parse(record.args_redacted) as { reason?: unknown }).reason : undefined;
  return typeof reason === 'string' ? REVOCATION_REASONS[reason] ?? reason : undefined;
}

export interface AuditQuery {
  filter: AuditFilter;
  limit: number;
  cursor?: AuditCursor;
}

const MAX_PAGE = 200;

/** The ISO 8601 forms `from` and `to` take: a calendar date, or a date and time with an optional zone. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * Epoch ms of an ISO 8601 `from`/`to`, NaN for another form or a day that does not exist (Date.parse
 * rolls 2026-02-30 into March). A date and time without a zone is UTC, as a calendar date is and as
 * the console shows every time: Date.parse would read it in the server process's own zone (TZ).
 */
function isoInstant(value: string): number {
  if (!ISO_8601.test(value) || dateToMs(value.slice(0, 10)) === undefined) return NaN;
  return Date.parse(value.length > 10 && !/(Z|[+-]\d{2}:\d{2})$/.test(value) ? `${value}Z` : value);
}

/** The audit log's filters: its listing (API and page) and its export take them. */
export const AUDIT_FILTERS = ['product', 'tool', 'client', 'connection', 'outcome', 'kind', 'from', 'to'] as const;
/** A listing's page: `limit` and `cursor` (pageParams). An export takes neither: it is every record. */
export const PAGE_PARAMS = ['limit', 'cursor'] as const;

/**
 * Refuses a query parameter a console route does not take, or one given twice (unless
 * `repeatable`): 400 invalid_request naming it. Every page and API route declares what it takes
 * (auth/console/index.ts), so nothing asked for is silently ignored, or dropped as a repeat.
 */
export function checkQuery(query: Record<string, string | string[] | undefined>, takes: readonly string[], repeatable: readonly string[] = []): void {
  for (const [name, value] of Object.entries(query)) {
    if (!takes.includes(name)) {
      const shown = escapeUnshowable(name.length > 64 ? `${name.slice(0, 64)}…` : name);
      throw new AppError('invalid_request', `unknown parameter ${shown}: ${takes.length ? `this takes ${takes.join(', ')}` : 'this takes none'}`);
    }
    if (!repeatable.includes(name)) once(value, name);
  }
}

/** A query parameter given at most once; empty is absent. */
function once(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw new AppError('invalid_request', `${name} may be given once`);
  return value === undefined || value === '' ? undefined : value;
}

/** A listing's `limit` (1-`most`, `usual` unless given) and `cursor` (one db/keyset.ts issued). */
function pageParams(params: { limit?: string | string[]; cursor?: string | string[] }, sizes: { usual: number; most: number }): { limit: number; cursor?: KeysetCursor } {
  const limitRaw = once(params.limit, 'limit');
  // Plain decimal digits only: Number() would also take 1e2, +5, 5.0, 0x10 and spaces.
  const limit = limitRaw === undefined ? sizes.usual : /^\d{1,4}$/.test(limitRaw) ? Number(limitRaw) : NaN;
  if (!(limit >= 1 && limit <= sizes.most)) throw new AppError('invalid_request', `limit must be a whole number 1-${sizes.most}, in decimal digits`);
  const cursorRaw = once(params.cursor, 'cursor');
  const cursor = cursorRaw ? decodeCursor(cursorRaw) : undefined;
  if (cursorRaw && !cursor) throw new AppError('invalid_request', 'cursor is not one this API issued');
  return { limit, cursor };
}

/** Reads filters from query parameters; anything malformed is invalid_request naming it. */
export function parseAuditQuery(viewer: Viewer, params: Record<string, string | string[] | undefined>): AuditQuery {
  const one = (name: string): string | undefined => once(params[name], name);
  const text = (name: string, max: number) => {
    const value = one(name);
    if (value !== undefined && value.length > max) throw new AppError('invalid_request', `${name} is too long`);
    return value;
  };
  const time = (name: string) => {
    const value = one(name);
    if (value === undefined) return undefined;
    // Epoch milliseconds, or ISO 8601 (a date, or a date and time): Date.parse alone would take '-5' or 'Nov 1 2026' too.
    let ms = /^\d+$/.test(value) ? Number(value) : isoInstant(value);
    // A calendar date as `to` (the console's date field) means up to the end of that day: `to` is
    // exclusive, so from=to=today would otherwise select nothing.
    if (name === 'to' && DATE.test(value)) ms += 86_400_000;
    // Only instants a Date can hold (±8.64e15 ms): anything past them is no time, and past 2^63 it
    // is no bigint for PostgreSQL either.
    if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw new AppError('invalid_request', `${name} must be an ISO 8601 date or epoch milliseconds`);
    return ms;
  };
  const { limit, cursor } = pageParams(params, { usual: 50, most: MAX_PAGE });
  const kind = one('kind');
  if (kind && !(AUDIT_KINDS as readonly string[]).includes(kind)) throw new AppError('invalid_request', `kind must be one of ${AUDIT_KINDS.join(', ')}`);
  const connection = one('connection');
  if (connection && !normaliseId(connection)) throw new AppError('invalid_request', 'connection must be a connection id');
  const filter: AuditFilter = {
    tenantId: viewer.tenant.id,
    userId: viewer.role === 'admin' ? undefined : viewer.userId,
    product: text('product', 32),
    name: text('tool', 200),
    clientId: text('client', 2048),
    connectionId: connection ? normaliseId(connection) : undefined,
    outcome: text('outcome', 64),
    kind: kind as AuditKind | undefined,
    from: time('from'),
    to: time('to'),
  };
  // A reversed range is a mistake to point out, not a question whose answer is "no records". A
  // calendar date as `to` is that whole day: a `from` at or after its end (From the day after To,
  // as the page's two date fields can be set) is reversed too.
  const toIsDay = typeof params.to === 'string' && DATE.test(params.to);
  if (filter.from !== undefined && filter.to !== undefined && (filter.from > filter.to || (toIsDay && filter.from >= filter.to))) {
    throw new AppError('invalid_request', 'from must not be later than to (the range from-to is reversed)');
  }
  return { filter, limit, cursor };
}

export async function auditFor(db: Db, viewer: Viewer, query: AuditQuery): Promise<{ rows: DbAuditRow[]; next?: string; previous?: string }> {
  requireScope(viewer, 'console.audit.read');
  if (query.filter.connectionId) await connectionFor(db, { ...viewer, scopes: undefined }, query.filter.connectionId);
  return queryAudit(db, query.filter, { limit: query.limit, cursor: query.cursor });
}

/** The public face of a connection (JSON API). */
export function connectionJson(c: ConnectionView, describeScope: (scope: string) => string | undefined) {
  return {
    id: c.id,
    client: { id: c.client_id, name: c.client_name, kind: c.client_kind, self_registered: c.client_kind !== 'registered' },
    product: c.product,
    resource: c.resource,
    scopes: c.scopes.split(' ').filter(Boolean).map((scope) => ({ scope, description: describeScope(scope) ?? scope })),
    user: { id: c.user_id, email: c.user_email },
    tenant_id: c.tenant_id,
    created_at: new Date(c.created_at).toISOString(),
    last_used_at: c.last_used_at ? new Date(c.last_used_at).toISOString() : null,
    call_count: c.call_count,
    revoked_at: c.revoked_at ? new Date(c.revoked_at).toISOString() : null,
    // The person who revoked it; null when nobody did (Portico or an operator did: the audit log says why).
    revoked_by: c.revoked_by ? { id: c.revoked_by, email: c.revoked_by_email } : null,
  };
}

export function auditJson(row: DbAuditRow) {
  return {
    id: row.id,
    seq: row.seq,
    time: new Date(row.time).toISOString(),
    tenant_id: row.tenant_id,
    user_id: row.user_id,
    client_id: row.client_id,
    connection_id: row.connection_id,
    product: row.product,
    kind: row.kind,
    name: row.name,
    args_digest: row.args_digest,
    args: row.args_redacted ? JSON.parse(row.args_redacted) : null,
    outcome: row.outcome,
    duration_ms: row.duration_ms,
    request_id: row.request_id,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}
