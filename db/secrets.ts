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

/** What a ring holds: where it is stored, how a fresh key is made, and what a key must look like. */
export interface RingKind<K> {
  name: string;
  generate(): K[] | Promise<K[]>;
  isKey(key: unknown): key is K;
}

/**
 * A stored ring. Before rotation existed the secrets held a bare list (cookie keys) or a JWKS
 * (`{ keys }`, signing keys): those are the current keys. A ring with no current key, or with a
 * key that is not one, is refused: an instance must not start with nothing to sign with.
 */
export function parseRing<K>(kind: RingKind<K>, stored: string): KeyRing<K> {
  const refused = (why: string) => new Error(`the stored secret "${kind.name}" is not a key ring (${why})`);
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    throw refused('not JSON');
  }
  const legacy = Array.isArray(value) ? value : (value as { keys?: unknown } | null)?.keys;
  const ring = (Array.isArray(legacy) ? { current: legacy, next: [], previous: [] } : value) as Partial<Record<(typeof STAGES)[number], unknown>> | null;
  if (!ring || typeof ring !== 'object' || !STAGES.every((stage) => Array.isArray(ring[stage]))) throw refused('no current, next and previous keys');
  const stages = ring as Record<(typeof STAGES)[number], unknown[]>;
  if (!stages.current.length) throw refused('no current key');
  if (!STAGES.every((stage) => stages[stage].every((key) => kind.isKey(key)))) throw refused('a key of the wrong form');
  return stages as KeyRing<K>;
}

export async function loadOrCreateRing<K>(db: DbOrTrx, kind: RingKind<K>): Promise<KeyRing<K>> {
  const stored = await loadOrCreateSecret(db, kind.name, async () => JSON.stringify({ current: await kind.generate(), next: [], previous: [] }));
  return parseRing(kind, stored);
}

/**
 * Changes a stored ring (which must exist: create it with loadOrCreateRing outside the
 * transaction, since a PostgreSQL transaction cannot go on after the insert a concurrent creator
 * wins) inside the caller's transaction. The row is locked first, so two operators rotating at
 * once take turns and the second sees the first's result. `change` may throw to write nothing.
 * Returns the ring as it was and as it is now.
 */
export async function updateRing<K>(trx: DbOrTrx, kind: RingKind<K>, change: (ring: KeyRing<K>) => KeyRing<K>): Promise<{ before: KeyRing<K>; after: KeyRing<K> }> {
  const { name } = kind;
  // On SQLite, where writers take turns on the whole database, the lock is a write (as lockTenant's, db/accounts.ts).
  if (dialectOf(trx) !== 'postgres') await trx('secrets').where({ name }).update({ value: trx.ref('value') });
  const query = trx('secrets').where({ name }).first('value');
  const row = await (dialectOf(trx) === 'postgres' ? query.forUpdate() : query);
  if (!row) throw new AppError('internal', `no stored secret "${name}"`);
  const before = parseRing(kind, row.value);
  const after = change(before);
  await trx('secrets').where({ name }).update({ value: JSON.stringify(after) });
  return { before, after };
}

/**
 * A stored ring read inside the caller's transaction under a share lock on its row (PostgreSQL;
 * SQLite's writers take turns anyway): a step of updateRing waits for the caller's transaction,
 * or the read waits for the step. Undefined if the ring is not stored.
 */
export async function readRingLocked<K>(trx: DbOrTrx, kind: RingKind<K>): Promise<KeyRing<K> | undefined> {
  const query = trx('secrets').where({ name: kind.name }).first('value');
  const row = await (dialectOf(trx) === 'postgres' ? query.forShare() : query);
  return row ? parseRing(kind, row.value) : undefined;
}

/** Keys for signed cookies (Koa's and oidc-provider's): the first of keysInOrder signs, every one verifies. */
export const COOKIE_KEYS: RingKind<string> = {
  name: 'cookie_keys',
  generate: () => [generateCookieKey(), generateCookieKey()],
  isKey: (key): key is string => typeof key === 'string' && key.length >= 16,
};

export function loadOrCreateCookieKeys(db: DbOrTrx): Promise<KeyRing<string>> {
  return loadOrCreateRing(db, COOKIE_KEYS);
}

export function generateCookieKey(): string {
  return randomBytes(32).toString('base64url');
}
