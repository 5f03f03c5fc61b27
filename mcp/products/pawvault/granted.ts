import type { ToolContext } from '../../../shared/catalog.js';
import { asGranted } from '../common.js';
import type { PawvaultRepository } from './repository.js';

/** A pet as the grant may see it: its vaccinations, visits and medications are pawvault.health.read's to show (list_health_records). */
export function petAsGranted(context: ToolContext<PawvaultRepository>, pet: object): Record<string, unknown> {
  const health = 'pawvault.health.read';
  return asGranted(context, pet, { vaccinations: health, visits: health, medications: health });
}
