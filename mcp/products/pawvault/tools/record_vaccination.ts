import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg } from '../../common.js';
import type { PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.record_vaccination',
  title: 'Record a vaccination',
  description:
    'Records a vaccine dose given to a pet: vaccine name, the date it was given (not in the future) and, when a booster is needed, the date the next dose is due (after the date given). ' +
    'Returns the record. A newer dose of the same vaccine replaces the older one in pawvault.list_due_vaccinations.',
  scope: 'pawvault.health.write',
  destructive: false,
  input: {
    pet_id: z.string().min(1).max(200).describe('Id of the pet.'),
    vaccine: nameArg(100).describe('Vaccine, e.g. Rabies, DHPP, FVRCP.'),
    administered_on: dateArg.describe('Date the dose was given, YYYY-MM-DD.'),
    due_on: dateArg.optional().describe('Date the next dose is due, YYYY-MM-DD.'),
    clinic: nameArg(200).optional().describe('Clinic or vet.'),
    notes: z.string().trim().max(1000).optional().describe('Batch number, reactions...'),
  },
  handler: ({ pet_id, administered_on, due_on, ...rest }, { repos }: ToolContext<PawvaultRepository>) =>
    repos.health.recordVaccination(pet_id, { ...rest, administered_on: dateToMs(administered_on)!, due_on: due_on === undefined ? undefined : dateToMs(due_on) }),
});
