/**
 * Events that every instance must hear: a connection was revoked, a product surface changed.
 * In one process this bus delivers them directly; with PostgreSQL, db/notify.ts relays them to
 * every other instance through LISTEN/NOTIFY (DESIGN.md §9).
 */
export type PorticoEvent =
  | { type: 'connection.revoked'; connectionId: string; grantId: string }
  /** One access token revoked on its own (RFC 7009); `tokenId` is its stored id (hashTokenId). */
  | { type: 'token.revoked'; tokenId: string }
  | { type: 'surface.changed'; product: string; status: 'live' | 'roadmap' };

type Listener = (event: PorticoEvent) => void;

export class EventBus {
  private readonly listeners = new Set<Listener>();
  /** Relays locally published events to other instances; set by the composition root. */
  relay?: (event: PorticoEvent) => Promise<void>;

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Delivers here and, through the relay, everywhere else. */
  async publish(event: PorticoEvent): Promise<void> {
    this.deliver(event);
    await this.relay?.(event);
  }

  private readonly relayListeners = new Set<(listening: boolean) => void>();

  /**
   * Hears whether events from other instances are arriving (the relay is listening) or may be
   * missed (its connection is down). Whatever was cached on the strength of hearing every
   * revocation must be dropped on each change (mcp/principal_cache.ts).
   */
  onRelayState(listener: (listening: boolean) => void): () => void {
    this.relayListeners.add(listener);
    return () => this.relayListeners.delete(listener);
  }

  /** Called by the relay when it starts or stops hearing other instances. */
  relayState(listening: boolean): void {
    for (const listener of this.relayListeners) listener(listening);
  }

  /** Delivers an event that arrived from another instance. */
  deliver(event: PorticoEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A failing listener must not stop the others from hearing a revocation.
      }
    }
  }
}
