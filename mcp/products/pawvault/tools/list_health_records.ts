import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.list_health_records',
  title: "List a pet's health records",
  description:
    "Returns a pet's health records, newest first: vaccinations (with due dates), vet visits and medications, or only one kind. " +
    'Up to limit records of each kind (default 50), with <kind>_total (how many the pet has) and <kind>_truncated (true when older ones were left out; a larger limit, up to 200, shows more). Read-only.',
  scope: 'pawvault.health.read',
  destructive: false,
  input: {
    pet_id: z.string().min(1).max(200).describe('Id of the pet.'),
    kind: z.enum(['vaccinations', 'visits', 'medications']).optional().describe('Only this kind of record.'),
    limit: z.number().int().min(1).max(200).default(50).describe('Most records of each kind (1-200, default 50).'),
  },
  handler: ({ pet_id, ...filter }, { repos }: ToolContext<PawvaultRepository>) => repos.health.list(pet_id, filter),
});
