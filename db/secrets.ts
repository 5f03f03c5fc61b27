/**
 * Secrets generated on first start and reused forever after (cookie keys, signing keys):
 * a restart must not log anyone out or invalidate tokens (DESIGN.md §1).
 */
import type { DbOrTrx } from './connect.js';
import { isUniqueViolation } from './errors.js';

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
