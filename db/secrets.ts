/**
 * Secrets generated on first start and reused forever after (cookie keys, signing keys, the MAC
 * key): a restart must not log anyone out or invalidate tokens (DESIGN.md §1). Keys that are
 * rotated (signing keys, cookie keys) are stored as a key ring (`KeyRing`).
 */
import { randomBytes } from 'node:crypto';
import { dialectOf, type DbOrTrx } from './connect.js';
import { isUniqueViolation } from './errors.js';
import { AppError } from '../shared/errors.js';

/**
 * Returns the stored secret `name`, creating it with `generate` if absent. Safe when several
 * instances start at once: the first insert wins and everyone reads the winner.
 */
export async function loadOrCreateSecret(db: DbOrTrx, name: string, generate: () => string | Promise<string>): Promise<string> {
  const existing = await db('secrets').where({ name }).first('value');
  if (existing) return existing.value;
  const value = await generate();
  try {
    await db('secrets').insert({ name, value, created_at: Date.now() });
    return value;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const winner = await db('secrets').where({ name }).first('value');
    return winner.value;
  }
}

/**
 * A rotated key's stages. `current` keys sign (the first of a kind) and verify; `next` keys are
 * published and verify, so that every instance knows them before they sign; `previous` keys only
 * verify what they signed before the rotation. An instance reads its ring when it starts.
 */
export interface KeyRing<K> {
  current: K[];
  next: K[];
  previous: K[];
}

export const STAGES = ['current', 'next', 'previous'] as const;

/** Every key of a ring, the signing ones first: the order signers and verifiers take them in. */
export function keysInOrder<K>(ring: KeyRing<K>): K[] {
  return [...ring.current, ...ring.next, ...ring.previous];
}

/**
 * A stored ring. Before rotation existed the secrets held a bare list (cookie keys) or a JWKS
 * (`{ keys }`, signing keys): those are the current keys.
 */
export function parseRing<K>(name: string, stored: string): KeyRing<K> {
  const value = JSON.parse(stored) as unknown;
  if (Array.isArray(value)) return { current: value as K[], next: [], previous: [] };
  if (value && typeof value === 'object') {
    const legacy = (value as { keys?: unknown }).keys;
    if (Array.isArray(legacy)) return { current: legacy as K[], next: [], previous: [] };
    const ring = value as Partial<KeyRing<K>>;
    if (STAGES.every((stage) => Array.isArray(ring[stage])) && ring.current!.length) return ring as KeyRing<K>;
  }
  throw new Error(`the stored secret "${name}" is not a key ring`);
}

export async function loadOrCreateRing<K>(db: DbOrTrx, name: string, generate: () => K[] | Promise<K[]>): Promise<KeyRing<K>> {
  const stored = await loadOrCreateSecret(db, name, async () => JSON.stringify({ current: await generate(), next: [], previous: [] }));
  return parseRing<K>(name, stored);
}

/**
 * Changes a stored ring (which must exist) inside the caller's transaction: the row is locked
 * first, so two operators rotating at once take turns and the second sees the first's result.
 * `change` may throw to write nothing. Returns the ring as it was and as it is now.
 */
export async function updateRing<K>(trx: DbOrTrx, name: string, change: (ring: KeyRing<K>) => KeyRing<K>): Promise<{ before: KeyRing<K>; after: KeyRing<K> }> {
  // On SQLite, where writers take turns on the whole database, the lock is a write (as lockTenant's, db/accounts.ts).
  if (dialectOf(trx) !== 'postgres') await trx('secrets').where({ name }).update({ value: trx.ref('value') });
  const query = trx('secrets').where({ name }).first('value');
  const row = await (dialectOf(trx) === 'postgres' ? query.forUpdate() : query);
  if (!row) throw new AppError('internal', `no stored secret "${name}"`);
  const before = parseRing<K>(name, row.value);
  const after = change(before);
  await trx('secrets').where({ name }).update({ value: JSON.stringify(after) });
  return { before, after };
}

export const COOKIE_KEYS = 'cookie_keys';

/** Keys for signed cookies (Koa's and oidc-provider's): the first of keysInOrder signs, every one verifies. */
export function loadOrCreateCookieKeys(db: DbOrTrx): Promise<KeyRing<string>> {
  return loadOrCreateRing(db, COOKIE_KEYS, () => [generateCookieKey(), generateCookieKey()]);
}

export function generateCookieKey(): string {
  return randomBytes(32).toString('base64url');
}
