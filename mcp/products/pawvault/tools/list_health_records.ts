import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { HEALTH_KINDS, type PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.list_health_records',
  title: "List a pet's health records",
  description:
    "Returns a pet's health records, newest first (same date: by id): vaccinations (with due dates), vet visits and medications, or only one kind. " +
    'Up to limit records of each kind per page (default 50, up to 200), with <kind>_total (how many the pet has) and <kind>_truncated (true when older ones follow); ' +
    'next_cursor, passed back as cursor with the same pet_id and kind, continues every kind that has more, and is null on the last page. Read-only.',
  scope: 'pawvault.health.read',
  destructive: false,
  input: {
    pet_id: z.string().min(1).max(200).describe('Id of the pet.'),
    kind: z.enum(HEALTH_KINDS).optional().describe('Only this kind of record.'),
    limit: z.number().int().min(1).max(200).default(50).describe('Most records of each kind on one page (1-200, default 50).'),
    cursor: z.string().min(1).max(300).optional().describe('The next_cursor of the previous page (same pet_id and kind), to continue the listing.'),
  },
  handler: ({ pet_id, ...filter }, { repos }: ToolContext<PawvaultRepository>) => repos.health.list(pet_id, filter),
});
