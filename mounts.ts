/**
 * The parts mounted into the composition root, in order. This is the one place that sees both
 * auth/ and mcp/: it hands the catalog (declared by the products in mcp/) to the authorization
 * server, and one event bus to everyone.
 */
import type { Mount } from './app.js';
import { authMount } from './auth/index.js';
import { mcpMount } from './mcp/index.js';
import { PRODUCTS } from './mcp/products/index.js';
import { buildCatalog } from './shared/catalog.js';
import { EventBus } from './shared/events.js';

export function defaultMounts(): Mount[] {
  const catalog = buildCatalog(PRODUCTS);
  const events = new EventBus();
  return [authMount({ catalog, events }), mcpMount({ catalog, events })];
}
