/**
 * Whose token is this, whatever resource it was issued for? Used only to attribute a refused call
 * (a token of another product, a revoked connection) to the tenant whose audit log must show it.
 * It never authenticates anything.
 */
import type { DbOrTrx } from '../db/connect.js';
import { hashTokenId } from '../db/grant_store.js';

export interface TokenOwner {
  connectionId: string;
  tenantId: string;
  userId: string;
  clientId: string;
}

export async function findTokenOwner(db: DbOrTrx, token: string): Promise<TokenOwner | undefined> {
  if (!token || token.length > 512) return undefined;
  const row = await db('oidc_payloads as p')
    .join('connections as c', 'c.grant_id', 'p.grant_id')
    .where({ 'p.model': 'AccessToken', 'p.id': hashTokenId(token) })
    .first('c.id as connection_id', 'c.tenant_id', 'c.user_id', 'c.client_id');
  return row ? { connectionId: row.connection_id, tenantId: row.tenant_id, userId: row.user_id, clientId: row.client_id } : undefined;
}
