import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg } from '../../common.js';
import { weightKgArg } from '../args.js';
import { SEXES, SPECIES, type PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.add_pet',
  title: 'Add a pet',
  description:
    "Adds a pet to the household: name and species, optionally breed, sex, birth date, microchip number, weight and notes. Returns the pet with its id. " +
    'Health records are added separately (record_vaccination, record_visit, add_medication).',
  scope: 'pawvault.pets.write',
  destructive: false,
  input: {
    name: nameArg(100).describe("The pet's name."),
    species: z.enum(SPECIES).describe('dog, cat, rabbit, bird, reptile or other.'),
    breed: nameArg(100).optional().describe('Breed.'),
    sex: z.enum(SEXES).optional().describe('female, male or unknown.'),
    birth_date: dateArg.optional().describe('Birth date, YYYY-MM-DD (an estimate is fine); not in the future.'),
    microchip_number: z.string().trim().regex(/^[0-9A-Za-z]{9,15}$/, 'must be 9 to 15 letters or digits').optional().describe('Microchip number (ISO 11784 chips have 15 digits).'),
    weight_kg: weightKgArg.optional(),
    notes: z.string().trim().max(2000).optional().describe('Allergies, temperament, diet...'),
  },
  handler: async ({ birth_date, ...rest }, { repos, resourceUri }: ToolContext<PawvaultRepository>) => {
    const record = await repos.pets.add({ ...rest, birth_date: birth_date === undefined ? undefined : dateToMs(birth_date) });
    return { ...record, uri: resourceUri('pets', record.id) };
  },
});
