/**
 * The parts mounted into the composition root, in order. This is the one place that sees both
 * auth/ and mcp/: it hands the catalog (declared by the products in mcp/) to the authorization
 * server, and one event bus to everyone.
 */
import type { Mount } from './app.js';
import type { DemoSeeder } from './db/demo.js';
import { authMount } from './auth/index.js';
import { consoleMount } from './auth/console/index.js';
import { mcpMount } from './mcp/index.js';
import { PRODUCTS } from './mcp/products/index.js';
import { buildCatalog, type ProductDefinition } from './shared/catalog.js';
import { EventBus } from './shared/events.js';
import { hostGuard } from './shared/hosts.js';
import { startEventRelay } from './db/notify.js';
import { eventsFileOf, watchEvents } from './db/sqlite_events.js';
import { SurfaceRegistry } from './db/surfaces.js';

/**
 * `events` lets a test hold the bus the parts share (e.g. to watch revocations reach the MCP host);
 * `products` lets a test serve an extra test-only product beside the real ones; `revokedSweepMs`
 * lets a test tell the revocation event from the sweep that backs it up (mcp/index.ts).
 */
export function defaultMounts(options: { events?: EventBus; products?: readonly ProductDefinition<any>[]; revokedSweepMs?: number } = {}): Mount[] {
  const products = options.products ?? PRODUCTS;
  const surfaces = new SurfaceRegistry(new Map(products.map((p) => [p.id, p.status])));
  const catalog = buildCatalog(products, (id) => surfaces.isLive(id));
  const events = options.events ?? new EventBus();
  // The MCP host first: its requests, the hot path, then never pass the authorization server's
  // middleware (oidc-provider's router and its per-request AsyncLocalStorage context).
  return [eventRelayMount(events), surfacesMount(surfaces, events), mcpMount({ catalog, events, revokedSweepMs: options.revokedSweepMs }), hostGuardMount, authMount({ catalog, events }), consoleMount({ catalog, events })];
}

/** The authorization server and the console answer only to Portico's own names (shared/hosts.ts); the MCP host checks its own. */
export const hostGuardMount: Mount = (app, { config }) => {
  app.use(hostGuard(config));
};

/**
 * On PostgreSQL, carries revocations and surface changes to every other instance. On SQLite,
 * hears those the admin CLI makes from its own process (db/sqlite_events.ts).
 */
export function eventRelayMount(events: EventBus): Mount {
  return async (_app, { config, db, secrets, log, onClose }) => {
    const file = eventsFileOf(config.database);
    if (file) onClose(watchEvents(file, events, log));
    const relay = startEventRelay({ config: config.database, db, bus: events, macKey: secrets.macKey, log });
    if (!relay) return;
    onClose(() => relay.close());
    await relay.ready;
  };
}

/** Loads which surfaces are live before anything serves, then keeps every instance current. */
export function surfacesMount(surfaces: SurfaceRegistry, events: EventBus): Mount {
  return async (_app, { db, log, onClose }) => {
    await surfaces.refresh(db, events);
    onClose(surfaces.start(db, events, log, 2_000));
  };
}

/** Every product's demo rows, for startPortico's `seeders` (DESIGN.md §2: sample data in every product). */
export function defaultSeeders(): DemoSeeder[] {
  return PRODUCTS.flatMap((product) => (product.seedDemo ? [product.seedDemo] : []));
}
