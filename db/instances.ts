/**
 * Which instances are running, and which keys each took up when it started. Keys are read once, at
 * start (docs/decisions.md), so after `keys add` an instance that has not restarted does not
 * publish the new keys, and after `keys activate` one that has not restarted still signs with the
 * old ones. The keys commands (auth/admin.ts) read this table and refuse a step that would let one
 * instance sign with a key another running instance does not publish, naming the instances to
 * restart first.
 *
 * Each instance writes its row when it starts, marks it seen every HEARTBEAT_MS, and deletes it
 * when it shuts down. One that stopped without saying so (killed, its machine gone) counts as
 * running until LIVE_MS after it was last seen. Rows hold key ids and fingerprints of cookie keys,
 * never key material.
 */
import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Db, DbOrTrx } from './connect.js';

const HEARTBEAT_MS = 10_000;
/** An instance not seen for this long has stopped (three heartbeats missed). */
export const LIVE_MS = 30_000;
/** Rows of instances gone this long are deleted by the next instance to start. */
const FORGOTTEN_MS = 24 * 3600_000;

/** The keys an instance took up when it started. */
export interface InstanceKeys {
  /** Signing key ids it publishes at /oauth/jwks. */
  published: string[];
  /** Signing key ids it signs with. */
  signing: string[];
  /** Fingerprints (cookieKeyFingerprint) of the cookie keys it reads. */
  cookieVerify: string[];
  /** Fingerprint of the cookie key it signs with. */
  cookieSign: string;
}

export interface InstanceRow {
  id: string;
  host: string;
  pid: number;
  startedAt: number;
  seenAt: number;
  keys: InstanceKeys;
}

/** Names a cookie key without revealing it: 96 bits of its SHA-256. */
export function cookieKeyFingerprint(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 16);
}

export interface RegisteredInstance {
  id: string;
  /** Deletes the row (on shutdown, before the pool closes). */
  close(): Promise<void>;
}

/**
 * Writes this instance's row and keeps it seen. `onError` hears a heartbeat that failed (the
 * database unreachable): the instance serves on, and writes its row again once it can.
 */
export async function registerInstance(
  db: Db, keys: InstanceKeys, onError: (error: unknown) => void, heartbeatMs = HEARTBEAT_MS,
  /**
   * Runs in the transaction that writes the row, after it: throws if the keys the instance took up
   * are no longer the stored ones (a keys step committed while it started), so that no keys step
   * can pass its guard without seeing an instance that runs with keys older than the step.
   */
  confirm?: (trx: DbOrTrx) => Promise<void>,
): Promise<RegisteredInstance> {
  const now = Date.now();
  const row = { id: randomUUID(), host: os.hostname(), pid: process.pid, started_at: now, seen_at: now, keys: JSON.stringify(keys) };
  await db('instances').where('seen_at', '<', now - FORGOTTEN_MS).delete();
  await db.transaction(async (trx) => {
    await trx('instances').insert(row);
    await confirm?.(trx);
  });
  let beating: Promise<void> | undefined;
  const timer = setInterval(() => {
    // One beat at a time: a database slower than the interval would otherwise have two beats find
    // the row missing and both write it.
    if (beating) return;
    beating = (async () => {
      const seenAt = Date.now();
      // A row deleted meanwhile (by hand, say) is written again: the instance is still running.
      const updated = await db('instances').where({ id: row.id }).update({ seen_at: seenAt });
      if (!updated) await db('instances').insert({ ...row, seen_at: seenAt });
    })().catch(onError).finally(() => (beating = undefined));
  }, heartbeatMs);
  timer.unref();
  return {
    id: row.id,
    async close() {
      clearInterval(timer);
      await beating;
      await db('instances').where({ id: row.id }).delete();
    },
  };
}

/** The instances seen within LIVE_MS, oldest first. */
export async function liveInstances(db: DbOrTrx): Promise<InstanceRow[]> {
  const rows: Array<{ id: string; host: string; pid: number | string; started_at: number | string; seen_at: number | string; keys: string }> =
    await db('instances').where('seen_at', '>=', Date.now() - LIVE_MS).orderBy([{ column: 'started_at' }, { column: 'id' }]).select('id', 'host', 'pid', 'started_at', 'seen_at', 'keys');
  return rows.map((r) => ({ id: r.id, host: r.host, pid: Number(r.pid), startedAt: Number(r.started_at), seenAt: Number(r.seen_at), keys: JSON.parse(r.keys) as InstanceKeys }));
}

/** How an operator recognises an instance: its host, process and start. */
export function describeInstance(instance: InstanceRow): string {
  return `instance ${instance.id} (${instance.host}, pid ${instance.pid}, started ${new Date(instance.startedAt).toISOString()})`;
}
