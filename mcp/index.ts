/** The MCP host (issue 4). Placeholder until it lands. */
import type { Mount } from '../app.js';
import type { Catalog } from '../shared/catalog.js';
import type { EventBus } from '../shared/events.js';

export function mcpMount(_options: { catalog: Catalog; events: EventBus }): Mount {
  return () => undefined;
}
