/**
 * Pending confirmations of destructive tool calls (DESIGN.md §6 step 5). The caller owns the
 * transaction: a confirmation is consumed in the same transaction as the tool's effect, so a
 * failed call leaves it usable and two parallel confirmed calls run the tool once.
 */
import { randomUUID } from 'node:crypto';
import type { DbOrTrx } from '../db/connect.js';

/** How long a person has to confirm (security checklist J2: at most 5 minutes). */
export const CONFIRMATION_TTL_MS = 5 * 60_000;

export interface ConfirmationKey {
  connectionId: string;
  tool: string;
  argsHash: string;
}

export async function createConfirmation(db: DbOrTrx, key: ConfirmationKey & { tenantId: string; userId: string }): Promise<{ id: string; expiresAt: number }> {
  const now = Date.now();
  // Expired rows are useless; clearing them here keeps the table small without a sweeper.
  await db('mcp_confirmations').where('expires_at', '<', now).delete();
  const row = {
    id: randomUUID(), connection_id: key.connectionId, tenant_id: key.tenantId, user_id: key.userId, tool: key.tool, args_hash: key.argsHash,
    created_at: now, expires_at: now + CONFIRMATION_TTL_MS, consumed_at: null,
  };
  await db('mcp_confirmations').insert(row);
  return { id: row.id, expiresAt: row.expires_at };
}

/**
 * Consumes a live pending confirmation for exactly this connection, tool and arguments.
 * One conditional UPDATE: under concurrency only one caller sees a changed row (checklist R12).
 */
export async function consumeConfirmation(db: DbOrTrx, key: ConfirmationKey): Promise<boolean> {
  const now = Date.now();
  const changed = await db('mcp_confirmations')
    .where({ connection_id: key.connectionId, tool: key.tool, args_hash: key.argsHash })
    .whereNull('consumed_at')
    .andWhere('expires_at', '>', now)
    .update({ consumed_at: now });
  return changed > 0;
}
