/**
 * Signing keys (ES256 and RS256), generated once and persisted through the secrets table: a
 * restart, or a second instance, signs and verifies with the same keys (DESIGN.md §1).
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { DbOrTrx } from '../db/connect.js';
import { loadOrCreateSecret } from '../db/secrets.js';

export interface PrivateJwks {
  keys: JWK[];
}

export async function loadOrCreateJwks(db: DbOrTrx): Promise<PrivateJwks> {
  const stored = await loadOrCreateSecret(db, 'jwks', async () => JSON.stringify(await generateJwks()));
  return JSON.parse(stored) as PrivateJwks;
}

async function generateJwks(): Promise<PrivateJwks> {
  const keys: JWK[] = [];
  for (const alg of ['ES256', 'RS256'] as const) {
    const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
    keys.push({ ...(await exportJWK(privateKey)), alg, use: 'sig', kid: randomUUID() });
  }
  return { keys };
}
