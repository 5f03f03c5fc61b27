import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.delete_pet',
  title: 'Delete a pet',
  description:
    'Permanently deletes a pet from the household together with all of its health records (vaccinations, vet visits, medications); this cannot be undone. ' +
    'Returns the deleted id and how many records of each kind went with it.',
  scope: 'pawvault.pets.write',
  destructive: true,
  confirmation: 'Pet {pet_id} and all of its vaccinations, vet visits and medications will be deleted permanently.',
  input: { pet_id: z.string().min(1).max(200).describe('Id of the pet to delete.') },
  handler: ({ pet_id }, { repos }: ToolContext<PawvaultRepository>) => repos.pets.delete(pet_id),
});
