import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { PawvaultRepository } from '../repository.js';

export default defineResource({
  collection: 'pets',
  title: 'Pet',
  description: "One pet's profile with its recent vaccinations, vet visits and medications.",
  scope: 'pawvault.pets.read',
  mimeType: 'application/json',
  read: (id, { repos }: ToolContext<PawvaultRepository>) => repos.pets.get(id),
});
