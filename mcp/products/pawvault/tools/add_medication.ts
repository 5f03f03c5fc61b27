import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg } from '../../common.js';
import type { PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.add_medication',
  title: 'Add a medication',
  description:
    'Records a medication a pet takes: name, dosage, frequency, start date and, for a course that ends, the end date (not before the start). ' +
    'Returns the record with active telling whether today is within its dates. Sets no reminders.',
  scope: 'pawvault.health.write',
  destructive: false,
  input: {
    pet_id: z.string().min(1).max(200).describe('Id of the pet.'),
    name: nameArg(100).describe('Medication, e.g. Carprofen.'),
    dosage: nameArg(100).describe('Dose, e.g. "25 mg".'),
    frequency: nameArg(100).describe('How often, e.g. "twice daily with food".'),
    start_date: dateArg.describe('First day, YYYY-MM-DD.'),
    end_date: dateArg.optional().describe('Last day, YYYY-MM-DD; omit for an ongoing medication.'),
    notes: z.string().trim().max(1000).optional().describe('Prescribing vet, side effects...'),
  },
  handler: ({ pet_id, start_date, end_date, ...rest }, { repos }: ToolContext<PawvaultRepository>) =>
    repos.health.addMedication(pet_id, { ...rest, start_date: dateToMs(start_date)!, end_date: end_date === undefined ? undefined : dateToMs(end_date) }),
});
