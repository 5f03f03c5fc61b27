/**
 * The grant store as the resource servers see it. auth/ writes it (through its oidc-provider
 * adapter and at consent); mcp/ and the console read it on every request, and revoke through it.
 *
 * Contract with auth/adapter: rows of `oidc_payloads` whose model is in BEARER_MODELS are keyed by
 * hashTokenId(value), and their stored payload has no `jti`. A token's row carries `grant_id`;
 * a connection row (table `connections`) is created for every grant at consent.
 */
import { hash, randomUUID } from 'node:crypto';
import { AppError } from '../shared/errors.js';
import type { PorticoEvent } from '../shared/events.js';
import { appendAudit } from './audit.js';
import { dialectOf, type DbOrTrx } from './connect.js';
import { newestFirstPage, type KeysetCursor, type KeysetPage } from './keyset.js';

export const BEARER_MODELS = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials', 'RegistrationAccessToken', 'InitialAccessToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
/** Models that die with their grant. */
const GRANTABLE_MODELS = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'ClientCredentials'];

export function hashTokenId(value: string): string {
  return hash('sha256', value, 'base64url');
}

export type ClientKind = 'registered' | 'dynamic' | 'metadata_document';

export interface DbConnectionRow {
  id: string;
  grant_id: string;
  tenant_id: string;
  user_id: string;
  client_id: string;
  client_name: string | null;
  client_kind: ClientKind;
  product: string;
  resource: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  call_count: number;
  revoked_at: number | null;
  revoked_by: string | null;
}

export interface NewConnection {
  grantId: string;
  tenantId: string;
  userId: string;
  clientId: string;
  clientName?: string | null;
  clientKind: ClientKind;
  product: string;
  resource: string;
  scopes: string[];
}

export async function createConnection(db: DbOrTrx, input: NewConnection): Promise<DbConnectionRow> {
  const row: DbConnectionRow = {
    id: randomUUID(),
    grant_id: input.grantId,
    tenant_id: input.tenantId,
    user_id: input.userId,
    client_id: input.clientId,
    client_name: input.clientName ?? null,
    client_kind: input.clientKind,
    product: input.product,
    resource: input.resource,
    scopes: [...new Set(input.scopes)].sort().join(' '),
    created_at: Date.now(),
    last_used_at: null,
    call_count: 0,
    revoked_at: null,
    revoked_by: null,
  };
  await db('connections').insert(row);
  return row;
}

export async function findConnectionByGrant(db: DbOrTrx, grantId: string): Promise<DbConnectionRow | undefined> {
  return db<DbConnectionRow>('connections').where({ grant_id: grantId }).first();
}

/** Which of these connections are revoked (ids of open sessions, checked after a gap in the event relay). */
export async function revokedAmong(db: DbOrTrx, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db<DbConnectionRow>('connections').whereIn('id', ids).whereNotNull('revoked_at').select('id');
  return rows.map((row) => row.id);
}

/** Of the access tokens with these stored ids, those no longer usable: revoked, or gone (destroyed at /oauth/revoke). */
export async function unusableTokensAmong(db: DbOrTrx, tokenIds: string[]): Promise<string[]> {
  if (!tokenIds.length) return [];
  const live = new Set<string>(await db('oidc_payloads').where({ model: 'AccessToken' }).whereIn('id', tokenIds).whereNull('revoked_at').pluck('id'));
  return tokenIds.filter((id) => !live.has(id));
}

/**
 * An organization's live connections, optionally only one person's or only to some products
 * (suspensions and membership changes revoke them).
 */
export async function liveConnections(db: DbOrTrx, tenantId: string, only: { userId?: string; products?: readonly string[] } = {}): Promise<DbConnectionRow[]> {
  const query = db<DbConnectionRow>('connections').where({ tenant_id: tenantId }).whereNull('revoked_at').orderBy('id');
  if (only.userId) query.where({ user_id: only.userId });
  if (only.products) query.whereIn('product', only.products);
  return query.select('*');
}

/**
 * The organization of this person's live connection of this client to this product used last (or
 * made last), if they have one: where a step-up or a reconnection most likely belongs.
 */
export async function lastConnectedTenant(db: DbOrTrx, of: { userId: string; clientId: string; product: string }): Promise<string | undefined> {
  const row = await db('connections')
    .where({ user_id: of.userId, client_id: of.clientId, product: of.product })
    .whereNull('revoked_at')
    .orderByRaw('coalesce(last_used_at, created_at) desc')
    .first<{ tenant_id: string } | undefined>('tenant_id');
  return row?.tenant_id;
}

/**
 * Records use of a connection (console: last used, call count), unless it is revoked: a request
 * whose token was checked before a revocation committed did not use it after, as countUses in
 * db/audit.ts counts.
 */
export async function touchConnection(db: DbOrTrx, id: string): Promise<void> {
  await db('connections').where({ id }).whereNull('revoked_at').update({ last_used_at: Date.now(), call_count: db.raw('call_count + 1') });
}

/**
 * Records use of a connection inside a call's transaction, as the call's commit point: refused
 * (connection_revoked, the transaction rolls back) if the connection was revoked meanwhile. The
 * UPDATE waits for a revocation holding the row and then sees it, so a call whose transaction
 * commits after a revocation never takes effect, whether or not this instance heard of it yet.
 */
export async function touchLiveConnection(db: DbOrTrx, id: string): Promise<void> {
  const changed = await db('connections').where({ id }).whereNull('revoked_at').update({ last_used_at: Date.now(), call_count: db.raw('call_count + 1') });
  if (!changed) throw new AppError('connection_revoked', 'this connection was revoked while the call ran; nothing was changed');
}

/** Who is calling, as established from a bearer token. Tenant comes from here, never from input. */
export interface Principal {
  connectionId: string;
  grantId: string;
  clientId: string;
  clientName: string | null;
  tenant: { id: string; slug: string; name: string };
  user: { id: string; email: string };
  /** The person's role in the tenant now (read with the token, not when the connection was made). */
  role: 'admin' | 'member';
  product: string;
  resource: string;
  /** The token's scopes (never wider than the connection's). */
  scopes: ReadonlySet<string>;
  expiresAt: number;
  /** The token's stored id (hashTokenId): what `token.revoked` names. */
  tokenId: string;
}

interface BearerRow {
  payload: string;
  expires_at: number | null;
  token_revoked_at: number | null;
  connection_id: string | null;
  connection_revoked_at: number | null;
  connection_scopes: string | null;
  product: string | null;
  resource: string | null;
  client_name: string | null;
  tenant_id: string | null;
  tenant_slug: string | null;
  tenant_name: string | null;
  tenant_suspended_at: number | string | null;
  user_id: string | null;
  user_email: string | null;
  user_disabled_at: number | string | null;
  role: 'admin' | 'member' | null;
}

/**
 * Resolves an opaque access token for `resource` in one indexed query, or throws
 * invalid_token / connection_revoked. Fails closed: no connection, tenant or user → no principal.
 * A connection of someone who is no longer a member of its tenant, or whose account is disabled,
 * is refused as revoked, even if the change has not revoked it (yet): both are read with the token.
 */
export async function authenticateBearer(db: DbOrTrx, token: string, resource: string, now = Date.now()): Promise<Principal> {
  if (!token || token.length > 512) throw new AppError('invalid_token', 'the access token is malformed');
  const tokenId = hashTokenId(token);
  const row: BearerRow | undefined = await db('oidc_payloads as p')
    .leftJoin('connections as c', 'c.grant_id', 'p.grant_id')
    .leftJoin('tenants as t', 't.id', 'c.tenant_id')
    .leftJoin('users as u', 'u.id', 'c.user_id')
    .leftJoin('memberships as m', function () {
      this.on('m.user_id', '=', 'c.user_id').andOn('m.tenant_id', '=', 'c.tenant_id');
    })
    .where({ 'p.model': 'AccessToken', 'p.id': tokenId })
    .first(
      'p.payload', 'p.expires_at', 'p.revoked_at as token_revoked_at', 'c.id as connection_id', 'c.revoked_at as connection_revoked_at',
      'c.scopes as connection_scopes', 'c.product', 'c.resource', 'c.client_name', 't.id as tenant_id', 't.slug as tenant_slug',
      't.name as tenant_name', 't.suspended_at as tenant_suspended_at', 'u.id as user_id', 'u.email as user_email', 'u.disabled_at as user_disabled_at', 'm.role',
    );
  if (!row) throw new AppError('invalid_token', 'the access token is not valid');
  if (row.connection_revoked_at || row.token_revoked_at) throw new AppError('connection_revoked', 'this connection was revoked');
  const payload = JSON.parse(row.payload) as { aud?: string | string[]; scope?: string; clientId?: string; grantId?: string; exp?: number; jkt?: string; 'x5t#S256'?: string };
  const expiresAt = (payload.exp ?? 0) * 1000;
  if (expiresAt <= now) throw new AppError('invalid_token', 'the access token has expired');
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (audiences.length !== 1 || audiences[0] !== resource) throw new AppError('invalid_token', 'the access token is for another resource');
  // Sender-constrained tokens need a proof we do not check; refuse rather than accept as plain bearer.
  if (payload.jkt || payload['x5t#S256']) throw new AppError('invalid_token', 'sender-constrained tokens are not accepted');
  if (!row.connection_id || !row.tenant_id || !row.user_id || row.resource !== resource) {
    throw new AppError('invalid_token', 'the access token has no connection for this resource');
  }
  if (row.tenant_suspended_at != null) throw new AppError('connection_revoked', 'the organization is suspended');
  if (row.user_disabled_at != null) throw new AppError('connection_revoked', 'the account behind this connection is disabled');
  if (!row.role) throw new AppError('connection_revoked', 'the person behind this connection is no longer a member of the organization');
  const granted = new Set((row.connection_scopes ?? '').split(' ').filter(Boolean));
  const scopes = new Set((payload.scope ?? '').split(' ').filter((s) => granted.has(s)));
  return {
    connectionId: row.connection_id,
    grantId: payload.grantId!,
    clientId: payload.clientId!,
    clientName: row.client_name,
    tenant: { id: row.tenant_id, slug: row.tenant_slug!, name: row.tenant_name! },
    user: { id: row.user_id, email: row.user_email! },
    role: row.role,
    product: row.product!,
    resource,
    scopes,
    expiresAt,
    tokenId,
  };
}

/**
 * Locks connection rows in id order (the order the audit log's batches take them in, db/audit.ts),
 * before a transaction that revokes several of them appends its first audit record. Revoking them
 * one after another instead held the organization's audit chain head while it waited for the next
 * connection, which a call of that connection held while it waited for the head: a deadlock. On
 * SQLite the transaction already holds the one write lock.
 */
export async function lockConnections(db: DbOrTrx, ids: readonly string[]): Promise<void> {
  if (!ids.length || dialectOf(db) !== 'postgres') return;
  // Code-unit order, which is `collate "C"`, across chunks too.
  const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 0; i < sorted.length; i += 1000) {
    await db('connections').whereIn('id', sorted.slice(i, i + 1000)).orderByRaw('id collate "C"').forNoKeyUpdate().select('id');
  }
}

/**
 * Revokes a connection: every token of its grant dies at once, the grant is gone (so the
 * provider refuses refreshes), and the revocation is audited in the same transaction.
 * Returns the connection, or undefined if it was already revoked. The caller publishes
 * `connection.revoked` on the event bus after commit, so live sessions close everywhere.
 */
export async function revokeConnection(
  db: DbOrTrx,
  connection: Pick<DbConnectionRow, 'id' | 'grant_id' | 'tenant_id' | 'client_id' | 'product'>,
  actor: { userId?: string | null; reason: string; requestId?: string },
): Promise<boolean> {
  const now = Date.now();
  const changed = await db('connections').where({ id: connection.id }).whereNull('revoked_at').update({ revoked_at: now, revoked_by: actor.userId ?? null });
  await revokeGrantTokens(db, connection.grant_id, now);
  if (!changed) return false;
  await appendAudit(db, {
    tenantId: connection.tenant_id, userId: actor.userId ?? null, clientId: connection.client_id, connectionId: connection.id,
    product: connection.product, kind: 'auth', name: 'connection.revoke', args: { reason: actor.reason }, outcome: 'ok', requestId: actor.requestId,
  });
  return true;
}

/** Revokes each connection (revokeConnection) inside the caller's transaction; returns those it revoked, not those revoked before. */
export async function revokeConnections(trx: DbOrTrx, connections: DbConnectionRow[], reason: string): Promise<DbConnectionRow[]> {
  const revoked: DbConnectionRow[] = [];
  // All of them before the first audit record: the record holds the chain head (lockConnections).
  await lockConnections(trx, connections.map((c) => c.id));
  for (const connection of connections) if (await revokeConnection(trx, connection, { reason })) revoked.push(connection);
  return revoked;
}

/** The events that close revoked connections' sessions on every instance, published after commit. */
export function revocationEvents(revoked: DbConnectionRow[]): PorticoEvent[] {
  return revoked.map((c) => ({ type: 'connection.revoked' as const, connectionId: c.id, grantId: c.grant_id }));
}

/** What an operator's command revoked, for its one line of output: the first few connections by name (a suspension may revoke thousands). */
export function revokedNote(revoked: DbConnectionRow[]): string {
  if (!revoked.length) return '';
  const named = revoked.slice(0, 5).map((c) => `${c.client_name ?? c.client_id} → ${c.product}`).join(', ');
  return `; revoked ${revoked.length} connection(s): ${named}${revoked.length > 5 ? ` and ${revoked.length - 5} more (the audit log names each)` : ''}`;
}

/**
 * Access-token rows are kept, marked revoked, so the resource server can answer
 * connection_revoked rather than invalid_token; every other row of the grant is deleted.
 */
export async function revokeGrantTokens(db: DbOrTrx, grantId: string, now = Date.now()): Promise<void> {
  await db('oidc_payloads').where({ grant_id: grantId, model: 'AccessToken' }).whereNull('revoked_at').update({ revoked_at: now });
  await db('oidc_payloads').where({ grant_id: grantId }).whereIn('model', GRANTABLE_MODELS.filter((m) => m !== 'AccessToken')).delete();
  await db('oidc_payloads').where({ model: 'Grant', id: grantId }).delete();
}

export interface ConnectionView extends DbConnectionRow {
  user_email: string;
  /** The e-mail of the person who revoked it (revoked_by); null when nobody did, or Portico or an operator did. */
  revoked_by_email: string | null;
}

/** A connection with its person's and its revoker's e-mail. */
function connectionViews(db: DbOrTrx) {
  return db('connections as c')
    .join('users as u', 'u.id', 'c.user_id')
    .leftJoin('users as r', 'r.id', 'c.revoked_by');
}

/** A tenant's connections, newest first, a page at a time (db/keyset.ts); `userId` narrows to one person's (members see only theirs). */
export async function listConnections(
  db: DbOrTrx,
  tenantId: string,
  options: { userId?: string; includeRevoked?: boolean; limit: number; cursor?: KeysetCursor },
): Promise<KeysetPage<ConnectionView>> {
  const query = connectionViews(db)
    .where('c.tenant_id', tenantId)
    .select('c.*', 'u.email as user_email', 'r.email as revoked_by_email');
  if (options.userId) query.where('c.user_id', options.userId);
  if (!options.includeRevoked) query.whereNull('c.revoked_at');
  return newestFirstPage<ConnectionView>(query, { time: 'c.created_at', id: 'c.id' }, options, (c) => ({ time: c.created_at, id: c.id }));
}

export async function findConnectionView(db: DbOrTrx, id: string): Promise<ConnectionView | undefined> {
  return connectionViews(db).where('c.id', id).first('c.*', 'u.email as user_email', 'r.email as revoked_by_email');
}
