/**
 * Relays EventBus events between instances through PostgreSQL LISTEN/NOTIFY (DESIGN.md §9).
 * SQLite is one instance by design, so it needs no relay.
 *
 * The channel name is derived from the deployment's own MAC key: instances of one deployment
 * share it, while other deployments (or test schemas) on the same PostgreSQL server never hear
 * each other's revocations.
 */
import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DatabaseConfig } from '../shared/config.js';
import type { EventBus, PorticoEvent } from '../shared/events.js';
import type { Logger } from '../shared/log.js';
import type { Db } from './connect.js';
import { isUnavailable } from './errors.js';

/** Pauses before each new attempt to send an event whose connection was lost (ms). */
const RELAY_RETRIES = [25, 150, 800];

/**
 * How often the LISTEN connection is asked a question, and how long its answer may take. A
 * connection that sends nothing finds out nothing: one a firewall or NAT silently dropped, or
 * whose database host froze, would hear no notification again while this instance went on
 * caching (mcp/principal_cache.ts) as if it heard every revocation. One that does not answer in
 * time is given up: the cache goes off and a new connection listens.
 */
const HEARTBEAT_MS = 5_000;

export interface EventRelay {
  /** Resolves once LISTEN is active (after a reconnect too). */
  ready: Promise<void>;
  close(): Promise<void>;
}

export function channelFor(macKey: string): string {
  return `portico_${createHash('sha256').update(`events:${macKey}`).digest('hex').slice(0, 24)}`;
}

/** The relay's application_name: its channel, which the instances sharing one secret share. */
export function relayName(channel: string): string {
  return `portico relay ${channel}`;
}

export function startEventRelay(options: { config: DatabaseConfig; db: Db; bus: EventBus; macKey: string; log: Logger; heartbeatMs?: number }): EventRelay | undefined {
  const { config, db, bus, log } = options;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  if (config.kind !== 'postgres') return undefined;
  const channel = channelFor(options.macKey);
  const instance = randomUUID();
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let asking = false;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const connect = async (attempt: number): Promise<void> => {
    if (closed) return;
    // Named in pg_stat_activity, so an operator (or a test) can tell which backend listens for whom;
    // an application_name in DATABASE_URL still wins.
    const next = new pg.Client({ connectionString: config.url, application_name: relayName(channel) });
    next.on('error', (error) => {
      log.warn('event relay connection error', { err: error });
      // Whatever was cached on the strength of hearing every revocation must go (mcp/principal_cache.ts).
      if (client === next) bus.relayState(false);
    });
    next.on('end', () => {
      if (closed || client !== next) return;
      client = undefined;
      bus.relayState(false);
      log.warn('event relay disconnected; reconnecting');
      schedule(1);
    });
    next.on('notification', (message) => {
      if (message.channel !== channel || !message.payload) return;
      try {
        const envelope = JSON.parse(message.payload) as { from: string; event: PorticoEvent };
        if (envelope.from !== instance) bus.deliver(envelope.event);
      } catch (error) {
        log.warn('event relay: unreadable notification', { err: error });
      }
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      bus.relayState(true);
      markReady();
    } catch (error) {
      log.warn('event relay could not listen; retrying', { err: error, attempt });
      await next.end().catch(() => undefined);
      schedule(attempt + 1);
    }
  };
  const schedule = (attempt: number) => {
    if (closed) return;
    retry = setTimeout(() => void connect(attempt), Math.min(5_000, 100 * 2 ** attempt));
    retry.unref();
  };

  bus.relay = async (event) => {
    // pg_notify through the pool: it commits on its own, outside any caller's transaction. It is
    // sent after a revocation has committed, so a connection lost at that moment must not lose
    // the event: tried again on a fresh connection, a few times over about a second.
    const payload = JSON.stringify({ from: instance, event });
    for (let attempt = 0; ; attempt += 1) {
      try {
        await db.raw('select pg_notify(?, ?)', [channel, payload]);
        return;
      } catch (error) {
        if (attempt === RELAY_RETRIES.length || !isUnavailable(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, RELAY_RETRIES[attempt]));
      }
    }
  };
  void connect(0);

  const heartbeat = setInterval(() => {
    const current = client;
    if (!current || asking) return;
    asking = true;
    const deadline = setTimeout(() => {
      if (client !== current) return;
      log.warn('event relay connection stopped answering; reconnecting', { waited_ms: heartbeatMs });
      // Ends the socket: pg emits 'end', and the handler above turns the cache off and reconnects.
      (current as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    }, heartbeatMs);
    deadline.unref();
    current.query('select 1').catch(() => undefined).finally(() => {
      clearTimeout(deadline);
      asking = false;
    });
  }, heartbeatMs);
  heartbeat.unref();

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      bus.relay = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}
