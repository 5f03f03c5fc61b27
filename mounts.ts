/**
 * The parts mounted into the composition root, in order. This is the one place that sees both
 * auth/ and mcp/: it hands the catalog (declared by the products in mcp/) to the authorization
 * server, and one event bus to everyone.
 */
import type { Mount } from './app.js';
import { authMount } from './auth/index.js';
import { consoleMount } from './auth/console/index.js';
import { mcpMount } from './mcp/index.js';
import { PRODUCTS } from './mcp/products/index.js';
import { buildCatalog } from './shared/catalog.js';
import { EventBus } from './shared/events.js';
import { startEventRelay } from './db/notify.js';

export function defaultMounts(): Mount[] {
  const catalog = buildCatalog(PRODUCTS);
  const events = new EventBus();
  return [eventRelayMount(events), authMount({ catalog, events }), consoleMount({ catalog, events }), mcpMount({ catalog, events })];
}

/** On PostgreSQL, carries revocations and surface changes to every other instance. */
export function eventRelayMount(events: EventBus): Mount {
  return async (_app, { config, db, secrets, log, onClose }) => {
    const relay = startEventRelay({ config: config.database, db, bus: events, macKey: secrets.macKey, log });
    if (!relay) return;
    onClose(() => relay.close());
    await relay.ready;
  };
}
