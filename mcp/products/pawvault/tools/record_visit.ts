import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg, textArg } from '../../common.js';
import type { PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.record_visit',
  title: 'Record a vet visit',
  description:
    'Records a vet visit of a pet: date, reason, and optionally clinic, outcome (diagnosis, advice) and cost in cents. Returns the record. Books nothing with any clinic.',
  scope: 'pawvault.health.write',
  destructive: false,
  input: {
    pet_id: z.string().min(1).max(200).describe('Id of the pet.'),
    visited_on: dateArg.describe('Date of the visit, YYYY-MM-DD.'),
    reason: textArg(500).describe('Why the pet went (check-up, limping, ...).'),
    clinic: nameArg(200).optional().describe('Clinic or vet.'),
    outcome: z.string().trim().max(2000).optional().describe('Diagnosis, treatment, advice.'),
    cost_cents: z.number().int().min(0).max(100_000_000).optional().describe('What it cost, in cents (e.g. 8500 = 85.00).'),
  },
  handler: ({ pet_id, visited_on, ...rest }, { repos }: ToolContext<PawvaultRepository>) =>
    repos.health.recordVisit(pet_id, { ...rest, visited_on: dateToMs(visited_on)! }),
});
