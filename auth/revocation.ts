/**
 * When the provider itself revokes a grant (code replay, refresh-token reuse, a refresh token
 * revoked at /oauth/revoke) the connection must die with it, exactly as when the console revokes:
 * all tokens of the grant dead, the connection marked revoked, the revocation audited, and every
 * instance told so that open MCP sessions close.
 */
import type { Db } from '../db/connect.js';
import { appendAudit } from '../db/audit.js';
import { findConnectionByGrant, revokeGrantTokens } from '../db/grant_store.js';
import type { EventBus } from '../shared/events.js';
import { TTL } from './lifetimes.js';

export type RevocationReason = 'authorization_code_replay' | 'refresh_token_reuse' | 'revoked_by_client' | 'pkce_verification_failed' | 'grant_revoked' | 'grant_expired';

export async function revokeGrant(db: Db, events: EventBus, grantId: string, reason: RevocationReason, requestId?: string): Promise<void> {
  const revoked = await db.transaction(async (trx) => {
    const now = Date.now();
    // The connection's row before the tokens' rows, as revokeConnection (db/grant_store.ts) takes
    // them: in the other order a console revocation at the same moment deadlocked with this one.
    const connection = await findConnectionByGrant(trx, grantId);
    const changed = connection ? await trx('connections').where({ id: connection.id }).whereNull('revoked_at').update({ revoked_at: now, revoked_by: null }) : 0;
    await revokeGrantTokens(trx, grantId, now);
    if (!connection || !changed) return undefined;
    await appendAudit(trx, {
      tenantId: connection.tenant_id, userId: connection.user_id, clientId: connection.client_id, connectionId: connection.id,
      product: connection.product, kind: 'auth', name: 'grant.revoke', args: { reason }, outcome: 'ok', requestId,
    });
    return connection;
  });
  if (revoked) await events.publish({ type: 'connection.revoked', connectionId: revoked.id, grantId });
}

/**
 * A grant past its lifetime (TTL.Grant) ends its connection as a revocation does (tokens dead, the
 * connection marked revoked, `grant.revoke` audited with reason `grant_expired`, every instance
 * told), before the purge deletes the grant's row: otherwise the connection stayed listed as live
 * in the console for ever, and its self-registered client was never purged. Run by the purge
 * timer (auth/index.ts); concurrent runs on several instances end each connection once.
 */
export async function endExpiredGrants(db: Db, events: EventBus, now = Date.now()): Promise<number> {
  const expired: string[] = await db('oidc_payloads').where({ model: 'Grant' }).where('expires_at', '<=', now).pluck('id');
  // Connections as old as a grant lives whose grant row is already gone without them being ended:
  // what a purge before this one left behind (an upgraded deployment). Younger ones are left alone:
  // a grant's row goes a moment before its connection is ended by a revocation in progress.
  const orphaned: string[] = await db('connections as c').whereNull('c.revoked_at').where('c.created_at', '<=', now - TTL.Grant * 1000)
    .whereNotExists(db('oidc_payloads as p').where('p.model', 'Grant').whereRaw('p.id = c.grant_id')).pluck('c.grant_id');
  const ids = [...new Set([...expired, ...orphaned])];
  for (const id of ids) await revokeGrant(db, events, id, 'grant_expired');
  return ids.length;
}

/** Why the provider revoked a grant, from the request that made it do so. */
export function reasonOf(route: string | undefined, grantType: unknown): RevocationReason {
  if (route === 'token' && grantType === 'authorization_code') return 'authorization_code_replay';
  if (route === 'token' && grantType === 'refresh_token') return 'refresh_token_reuse';
  if (route === 'revocation') return 'revoked_by_client';
  return 'grant_revoked';
}
