import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { PawvaultRepository } from '../repository.js';

export default defineResource({
  collection: 'pets',
  title: 'Pet',
  description: "One pet's profile with its recent vaccinations, vet visits and medications.",
  scope: 'pawvault.pets.read',
  mimeType: 'application/json',
  read: async (id, { repos, resourceUri }: ToolContext<PawvaultRepository>) => {
    const record = await repos.pets.get(id);
    return { ...record, uri: resourceUri('pets', record.id) };
  },
});
