import type { ToolContext } from '../../../shared/catalog.js';
import { asGranted } from '../common.js';
import type { CavalierRepository } from './repository.js';

/** A deal as the grant may see it: the summaries of its quotes and statements of work are their own scopes' to show. */
export function dealAsGranted(context: ToolContext<CavalierRepository>, deal: object): Record<string, unknown> {
  return asGranted(context, deal, { quotes: 'cavalier.quotes.read', sows: 'cavalier.sows.read' });
}
