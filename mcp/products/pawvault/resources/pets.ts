import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { PawvaultRepository } from '../repository.js';
import { petAsGranted } from '../granted.js';

export default defineResource({
  collection: 'pets',
  title: 'Pet',
  description: "One pet's profile with, for connections that may read health records (pawvault.health.read), its recent vaccinations, vet visits and medications.",
  scope: 'pawvault.pets.read',
  mimeType: 'application/json',
  read: async (id, context: ToolContext<PawvaultRepository>) => {
    const record = await context.repos.pets.get(id);
    return { ...petAsGranted(context, record), uri: context.resourceUri('pets', record.id) };
  },
});
