import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { petAsGranted } from '../granted.js';
import type { PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.get_pet',
  title: 'Get a pet',
  description:
    "Returns one pet's profile (age computed from the birth date) and, for connections that may read health records (pawvault.health.read), " +
    'its most recent ones: up to 20 vaccinations (with due dates), vet visits and medications (each with active true while today is within ' +
    'its dates), newest first; pawvault.list_health_records shows more, with how many there are. Read-only.',
  scope: 'pawvault.pets.read',
  destructive: false,
  input: { pet_id: z.string().min(1).max(200).describe('Id of the pet.') },
  handler: async ({ pet_id }, context: ToolContext<PawvaultRepository>) => {
    const record = await context.repos.pets.get(pet_id);
    return { ...petAsGranted(context, record), uri: context.resourceUri('pets', record.id) };
  },
});
