import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg } from '../../common.js';
import { MAX_WEIGHT_KG, weightKgArg } from '../args.js';
import { SEXES, SPECIES, type PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.update_pet',
  title: 'Update a pet',
  description:
    "Changes a pet's profile: name, species, breed, sex, birth date, microchip number, weight or notes; fields left out stay as they are, null clears an optional field. " +
    'Returns the updated pet. Does not touch health records.',
  scope: 'pawvault.pets.write',
  destructive: false,
  idempotent: true,
  input: {
    pet_id: z.string().min(1).max(200).describe('Id of the pet.'),
    name: nameArg(100).optional().describe('New name.'),
    species: z.enum(SPECIES).optional().describe('New species.'),
    breed: nameArg(100).nullable().optional().describe('New breed; null clears it.'),
    sex: z.enum(SEXES).nullable().optional().describe('New sex; null clears it.'),
    birth_date: dateArg.nullable().optional().describe('New birth date, YYYY-MM-DD, not in the future; null clears it.'),
    microchip_number: z.string().trim().regex(/^[0-9A-Za-z]{9,15}$/, 'must be 9 to 15 letters or digits').nullable().optional().describe('New microchip number; null clears it.'),
    weight_kg: weightKgArg.nullable().optional().describe(`New weight in kilograms (0.001-${MAX_WEIGHT_KG}, at most three decimals); null clears it.`),
    notes: z.string().trim().max(2000).nullable().optional().describe('New notes; null clears them.'),
  },
  handler: async ({ pet_id, birth_date, ...rest }, { repos, resourceUri }: ToolContext<PawvaultRepository>) => {
    const record = await repos.pets.update(pet_id, { ...rest, birth_date: birth_date === undefined ? undefined : birth_date === null ? null : dateToMs(birth_date) });
    return { ...record, uri: resourceUri('pets', record.id) };
  },
});
