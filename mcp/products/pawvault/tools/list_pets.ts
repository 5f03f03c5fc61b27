import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { SPECIES, type PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.list_pets',
  title: 'List pets',
  description:
    "Lists the household's pets, most recently added first, optionally one species. " +
    'Returns { pets: [{ id, name, species, breed, sex, birth_date, age_years, microchip_number, weight_kg, notes, ... }], next_cursor }. Health records are not included (pawvault.get_pet). Read-only.',
  scope: 'pawvault.pets.read',
  destructive: false,
  input: { species: z.enum(SPECIES).optional().describe('Only pets of this species.'), ...pageArgs },
  handler: async (args, { repos }: ToolContext<PawvaultRepository>) => {
    const page = await repos.pets.list(args);
    return { pets: page.items, next_cursor: page.next_cursor };
  },
});
