/**
 * Writes a grant, its connection and an opaque access token straight into the grant store, in
 * exactly the form auth/'s oidc-provider adapter writes them. For tests of the resource servers
 * that are not about OAuth; the end-to-end tests obtain tokens through the real flow instead.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DbOrTrx } from '../../db/connect.js';
import { createConnection, hashTokenId, type DbConnectionRow } from '../../db/grant_store.js';
import { rememberSecret } from './secrets.js';

export interface IssuedToken {
  token: string;
  connection: DbConnectionRow;
}

export async function issueAccessToken(
  db: DbOrTrx,
  input: { tenantId: string; userId: string; product: string; resource: string; scopes: string[]; clientId?: string; ttlSeconds?: number },
): Promise<IssuedToken> {
  const now = Math.floor(Date.now() / 1000);
  const grantId = randomBytes(16).toString('base64url');
  const clientId = input.clientId ?? `test-client-${randomUUID()}`;
  const scope = input.scopes.join(' ');
  await db('oidc_payloads').insert({
    model: 'Grant', id: grantId, grant_id: null, client_id: clientId, account_id: input.userId, expires_at: (now + 86400) * 1000,
    payload: JSON.stringify({ kind: 'Grant', jti: grantId, iat: now, exp: now + 86400, accountId: input.userId, clientId, resources: { [input.resource]: scope } }),
  });
  const connection = await createConnection(db, {
    grantId, tenantId: input.tenantId, userId: input.userId, clientId, clientName: 'Test client', clientKind: 'dynamic',
    product: input.product, resource: input.resource, scopes: input.scopes,
  });
  const token = randomBytes(32).toString('base64url');
  rememberSecret(token);
  const exp = now + (input.ttlSeconds ?? 3600);
  await db('oidc_payloads').insert({
    model: 'AccessToken', id: hashTokenId(token), grant_id: grantId, client_id: clientId, account_id: input.userId, expires_at: exp * 1000,
    payload: JSON.stringify({ kind: 'AccessToken', iat: now, exp, accountId: input.userId, clientId, grantId, scope, aud: input.resource, gty: 'authorization_code' }),
  });
  return { token, connection };
}
