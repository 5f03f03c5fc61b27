/** The OAuth 2.1 authorization server (issue 3). Placeholder until it lands. */
import type { Mount } from '../app.js';
import type { Catalog } from '../shared/catalog.js';
import type { EventBus } from '../shared/events.js';

export function authMount(_options: { catalog: Catalog; events: EventBus }): Mount {
  return () => undefined;
}
