/**
 * Signing keys (ES256 and RS256), generated once and persisted through the secrets table as a key
 * ring (db/secrets.ts; cookie keys are one too): a restart, or a second instance, signs and
 * verifies with the same keys (DESIGN.md §1). Rotation moves keys through the ring's stages
 * (`keys add`, `keys activate`, `keys retire`: auth/admin.ts); an instance reads the rings when it
 * starts.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { DbOrTrx } from '../db/connect.js';
import { cookieKeyFingerprint, type InstanceKeys } from '../db/instances.js';
import { loadOrCreateRing, type KeyRing, type RingKind } from '../db/secrets.js';

export interface PrivateJwks {
  keys: JWK[];
}

/** Private signing keys: each names itself (`kid`) and its algorithm, and holds its private part. */
export const SIGNING_KEYS: RingKind<JWK> = {
  name: 'jwks',
  generate: generateSigningKeys,
  isKey: (key): key is JWK => {
    const jwk = key as Partial<JWK> | null;
    return !!jwk && typeof jwk === 'object' && typeof jwk.kid === 'string' && typeof jwk.alg === 'string' && typeof jwk.kty === 'string' && typeof jwk.d === 'string';
  },
};

export function loadOrCreateSigningKeys(db: DbOrTrx): Promise<KeyRing<JWK>> {
  return loadOrCreateRing(db, SIGNING_KEYS);
}

/**
 * The provider's key set: the current keys sign (oidc-provider signs with the first key of an
 * algorithm that may sign), the others are published and verify only (`key_ops`).
 */
export async function loadOrCreateJwks(db: DbOrTrx): Promise<PrivateJwks> {
  return providerJwks(await loadOrCreateSigningKeys(db));
}

export function providerJwks(ring: KeyRing<JWK>): PrivateJwks {
  const verifyOnly = (key: JWK): JWK => ({ ...key, key_ops: ['verify'] });
  return { keys: [...ring.current, ...[...ring.next, ...ring.previous].map(verifyOnly)] };
}

/** One key per signing algorithm Portico offers. */
export async function generateSigningKeys(): Promise<JWK[]> {
  const keys: JWK[] = [];
  for (const alg of ['ES256', 'RS256'] as const) {
    const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
    keys.push({ ...(await exportJWK(privateKey)), alg, use: 'sig', kid: randomUUID() });
  }
  return keys;
}

/**
 * The keys an instance takes up from the rings as it read them (db/instances.ts): the signing key
 * ids it publishes and signs with, and fingerprints of the cookie keys it reads (`cookieKeys` in
 * keysInOrder: the first signs).
 */
export function instanceKeysOf(signing: KeyRing<JWK>, cookieKeys: readonly string[]): InstanceKeys {
  return {
    published: providerJwks(signing).keys.map((key) => key.kid!),
    signing: signing.current.map((key) => key.kid!),
    cookieVerify: cookieKeys.map(cookieKeyFingerprint),
    cookieSign: cookieKeyFingerprint(cookieKeys[0]),
  };
}

/** Whether two instances run with the same keys (in whatever order they publish them). */
export function sameKeys(a: InstanceKeys, b: InstanceKeys): boolean {
  const same = (x: string[], y: string[]) => x.length === y.length && x.every((item) => y.includes(item));
  return same(a.published, b.published) && same(a.signing, b.signing) && same(a.cookieVerify, b.cookieVerify) && a.cookieSign === b.cookieSign;
}
