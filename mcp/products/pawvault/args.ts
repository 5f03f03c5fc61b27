/** Argument shapes shared by pawvault's add and update tools, so both validate the same way. */
import { z } from 'zod';

/** The largest weight pawvault keeps, in kilograms. */
export const MAX_WEIGHT_KG = 1000;

/**
 * A weight in kilograms, to the gram: PostgreSQL keeps weight_kg as real (float4, about seven
 * significant digits), where a weight below its range failed the call as `internal` and more
 * digits than it holds came back rounded, unlike on SQLite. Three decimals up to 1000 kg fit it
 * exactly as written on both databases.
 */
export const weightKgArg = z
  .number()
  .min(0.001, 'must be at least 0.001 (one gram)')
  .max(MAX_WEIGHT_KG)
  .refine((kg) => Math.abs(kg * 1000 - Math.round(kg * 1000)) < 1e-6, 'must have at most three decimals (grams)')
  .describe(`Weight in kilograms, 0.001-${MAX_WEIGHT_KG}, at most three decimals (grams).`);
