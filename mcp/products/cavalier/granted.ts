import type { ToolContext } from '../../../shared/catalog.js';
import { asGranted } from '../common.js';
import type { CavalierRepository } from './repository.js';

/** A deal as the grant may see it: the summaries of its quotes and statements of work are their own scopes' to show. */
export function dealAsGranted(context: ToolContext<CavalierRepository>, deal: object): Record<string, unknown> {
  const shown = asGranted(context, deal, { quotes: 'cavalier.quotes.read', sows: 'cavalier.sows.read' });
  // A list's total and whether it was cut go where the list goes.
  for (const part of ['quotes', 'sows']) {
    if (part in shown) continue;
    delete shown[`${part}_total`];
    delete shown[`${part}_truncated`];
  }
  return shown;
}
