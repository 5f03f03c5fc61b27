/** pawvault: pet records for a household (direct-to-consumer: the household is the tenant). */
import { defineProduct } from '../../../shared/catalog.js';
import { pawvaultRepository, type PawvaultRepository } from './repository.js';
import { seedPawvault } from './seed.js';
import listPets from './tools/list_pets.js';
import getPet from './tools/get_pet.js';
import addPet from './tools/add_pet.js';
import updatePet from './tools/update_pet.js';
import deletePet from './tools/delete_pet.js';
import recordVaccination from './tools/record_vaccination.js';
import recordVisit from './tools/record_visit.js';
import addMedication from './tools/add_medication.js';
import listHealthRecords from './tools/list_health_records.js';
import listDueVaccinations from './tools/list_due_vaccinations.js';
import petsResource from './resources/pets.js';
import prepareVetVisit from './prompts/prepare_vet_visit.js';

export const pawvault = defineProduct<PawvaultRepository>({
  id: 'pawvault',
  title: 'PawVault',
  kind: 'Pet records (direct-to-consumer)',
  status: 'live',
  scopes: {
    'pawvault.pets.read': "See your household's pets and their profiles",
    'pawvault.pets.write': 'Add and edit pets, and delete a pet with all of its records',
    'pawvault.health.read': "See your pets' vaccinations, vet visits and medications, and which vaccinations are due",
    'pawvault.health.write': 'Record vaccinations, vet visits and medications',
  },
  tools: [listPets, getPet, addPet, updatePet, deletePet, recordVaccination, recordVisit, addMedication, listHealthRecords, listDueVaccinations],
  resources: [petsResource],
  prompts: [prepareVetVisit],
  entities: { pet: 'pawvault_pets' },
  seedDemo: seedPawvault,
  repositories: pawvaultRepository,
});
