/**
 * Which product surfaces are live. The catalog declares a default status per product; an
 * operator's `surface ship midas` stores an override here. Every instance keeps the current set
 * in memory (it is read on every request) and refreshes it on a `surface.changed` event, or by a
 * cheap poll for changes made by a process that could not notify (the CLI on SQLite).
 */
import type { ProductStatus } from '../shared/catalog.js';
import type { EventBus } from '../shared/events.js';
import type { Logger } from '../shared/log.js';
import type { Db, DbOrTrx } from './connect.js';

export async function setSurfaceStatus(db: DbOrTrx, product: string, status: ProductStatus): Promise<void> {
  await db('surfaces').insert({ product, status, changed_at: Date.now() }).onConflict('product').merge();
}

export async function surfaceOverrides(db: DbOrTrx): Promise<Map<string, ProductStatus>> {
  const rows: Array<{ product: string; status: ProductStatus }> = await db('surfaces').select('product', 'status');
  return new Map(rows.map((r) => [r.product, r.status]));
}

export class SurfaceRegistry {
  private overrides = new Map<string, ProductStatus>();
  private timer?: NodeJS.Timeout;
  /** Counts the changes heard as events: a poll that read the table before one of them must not undo it. */
  private heard = 0;

  constructor(private readonly defaults: ReadonlyMap<string, ProductStatus>) {}

  isLive(product: string): boolean {
    return (this.overrides.get(product) ?? this.defaults.get(product)) === 'live';
  }

  statusOf(product: string): ProductStatus | undefined {
    return this.overrides.get(product) ?? this.defaults.get(product);
  }

  /** Loads the overrides; publishes `surface.changed` locally for every product whose status moved. */
  async refresh(db: Db, events: EventBus): Promise<void> {
    const heard = this.heard;
    const next = await surfaceOverrides(db);
    // A change was heard while the table was read: this answer may predate it (the NOTIFY comes
    // after the commit), so it is dropped rather than allowed to take the change back; the next
    // poll reads the table again.
    if (heard !== this.heard) return;
    const before = new Map([...this.defaults.keys()].map((p) => [p, this.statusOf(p)]));
    this.overrides = next;
    for (const [product, status] of before) {
      const now = this.statusOf(product);
      if (now && now !== status) events.deliver({ type: 'surface.changed', product, status: now });
    }
  }

  /** Keeps the registry current: on events from other instances, and by polling every `pollMs`. */
  start(db: Db, events: EventBus, log: Logger, pollMs: number): () => void {
    let refreshing = false;
    const refresh = () => {
      if (refreshing) return;
      refreshing = true;
      this.refresh(db, events)
        .catch((error: unknown) => log.warn('surface refresh failed', { err: error }))
        .finally(() => (refreshing = false));
    };
    const off = events.on((event) => {
      if (event.type === 'surface.changed' && this.statusOf(event.product) !== event.status) {
        this.heard += 1;
        this.overrides.set(event.product, event.status);
      }
    });
    this.timer = setInterval(refresh, pollMs);
    this.timer.unref();
    return () => {
      off();
      clearInterval(this.timer);
    };
  }
}
