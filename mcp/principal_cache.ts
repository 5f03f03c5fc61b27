/**
 * Principals of recently seen access tokens, so that a busy connection does not cost a grant-store
 * query per request. DESIGN.md §4 allows an in-process cache only if revocation invalidates it
 * on every instance; here:
 *   - `connection.revoked` and `token.revoked` (delivered here and, on PostgreSQL, relayed to
 *     every instance by LISTEN/NOTIFY) drop the entries at once;
 *   - while the relay is not listening (EventBus.onRelayState) nothing is served from or
 *     stored in the cache, and every entry is dropped on both transitions (events may be lost);
 *   - a lookup that started before an invalidation is never stored (the generation check), so a
 *     database answer read just before a revocation cannot outlive it;
 *   - an entry lives until the token expires and at most `maxAgeMs` (a bound on anything missed).
 * Only successful lookups are cached; refused tokens always reach the database.
 */
import type { Principal } from '../db/grant_store.js';

interface Entry {
  principal: Principal;
  /** hashTokenId of the token: what `token.revoked` names. */
  tokenHash: string;
  validUntil: number;
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * The keys of each connection's entries: a revocation drops them without walking the cache. A
   * suspension revokes thousands of connections at once, one event each; walking 10,000 entries
   * per event held the event loop for half a second.
   */
  private readonly byConnection = new Map<string, Set<string>>();
  private generation = 0;
  private enabled = true;

  constructor(private readonly options: { maxEntries: number; maxAgeMs: number }) {}

  /**
   * Key of a token at a resource (the audience is part of what was checked). The token itself,
   * not its hash: a sha256 per request was a visible share of the hot path, and the token is in
   * this process's memory for the request anyway; the hash is computed only on a miss.
   */
  static key(token: string, resource: string): string {
    return `${resource} ${token}`;
  }

  get(key: string, now = Date.now()): Principal | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.validUntil <= now) {
      this.remove(key);
      return undefined;
    }
    return entry.principal;
  }

  /** Taken before a database lookup and handed to `set`: a lookup older than the last invalidation is not stored. */
  mark(): number {
    return this.generation;
  }

  set(key: string, principal: Principal, tokenHash: string, mark: number, now = Date.now()): void {
    if (!this.enabled || mark !== this.generation || this.options.maxEntries <= 0) return;
    this.remove(key);
    if (this.entries.size >= this.options.maxEntries) this.remove(this.entries.keys().next().value!);
    this.entries.set(key, { principal, tokenHash, validUntil: Math.min(principal.expiresAt, now + this.options.maxAgeMs) });
    const keys = this.byConnection.get(principal.connectionId);
    if (keys) keys.add(key);
    else this.byConnection.set(principal.connectionId, new Set([key]));
  }

  dropConnection(connectionId: string): void {
    this.generation += 1;
    for (const key of this.byConnection.get(connectionId) ?? []) this.remove(key);
  }

  /** The stored ids of the live cached tokens (the revocation sweep's, as connectionIds). */
  tokenIds(): string[] {
    const now = Date.now();
    const ids = new Set<string>();
    for (const [key, entry] of this.entries) {
      if (entry.validUntil <= now) this.remove(key);
      else ids.add(entry.tokenHash);
    }
    return [...ids];
  }

  /**
   * The connections some live cached principal belongs to. Entries past their time go here (a
   * token used once is never looked up again, and its entry would otherwise stay, watched by the
   * revocation sweep every second, until 10,000 newer ones pushed it out).
   */
  connectionIds(now = Date.now()): string[] {
    for (const [key, entry] of this.entries) if (entry.validUntil <= now) this.remove(key);
    return [...this.byConnection.keys()];
  }

  dropToken(tokenHash: string): void {
    this.generation += 1;
    for (const [key, entry] of this.entries) if (entry.tokenHash === tokenHash) this.remove(key);
  }

  /** Events may have been missed (or will be): forget everything; serve from the cache only while `enabled`. */
  reset(enabled: boolean): void {
    this.generation += 1;
    this.enabled = enabled;
    this.entries.clear();
    this.byConnection.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    const keys = this.byConnection.get(entry.principal.connectionId)!;
    keys.delete(key);
    if (!keys.size) this.byConnection.delete(entry.principal.connectionId);
  }
}
