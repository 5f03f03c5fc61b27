/** Argument shapes shared by harvest's create and update tools, so both validate the same way. */
import { z } from 'zod';
import { currencyArg, instantArg, minorArg, nameArg, textArg } from '../common.js';
import { CONDITIONS, CONFIDENCES } from './repository.js';

export const lotFields = {
  item: nameArg(200).describe('What the lot is, e.g. "Copper cable offcuts, 2.5 mm²".'),
  description: z.string().trim().max(4000).describe('Longer description: make, model, defects, provenance.'),
  condition: z.enum(CONDITIONS).describe('new, like_new, good, fair, poor or scrap.'),
  quantity: z.number().int().min(1).max(1_000_000).describe('Number of units in the lot.'),
  currency: currencyArg,
  estimated_value_minor: minorArg('Estimated value of the whole lot'),
  location: nameArg(200).describe('Where the lot is stored.'),
};

export const tagArg = nameArg(40)
  .regex(/^[\p{L}\p{N}][\p{L}\p{N} _.-]*$/u, 'must start with a letter or digit and contain only letters, digits, spaces, "_", "." or "-"');

export const reportFields = {
  subject: nameArg(200).describe('Who or what the report is about.'),
  source: nameArg(200).describe('Where the information comes from (person, publication, site visit).'),
  summary: textArg(20_000).describe('The intelligence itself (up to 20,000 characters).'),
  confidence: z.enum(CONFIDENCES).describe('How reliable the source is judged: low, medium or high.'),
  tags: z.array(tagArg).max(20).describe('Up to 20 tags; stored in lower case, duplicates removed.'),
  observed_at: instantArg.describe('When the information was observed, ISO 8601 with time zone.'),
};
