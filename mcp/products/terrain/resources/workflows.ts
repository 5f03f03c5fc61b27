import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { TerrainRepository } from '../repository.js';

export default defineResource({
  collection: 'workflows',
  title: 'Workflow definition',
  description: 'One workflow definition with its ordered steps and their instructions.',
  scope: 'terrain.workflows.read',
  mimeType: 'application/json',
  read: (id, { repos }: ToolContext<TerrainRepository>) => repos.workflows.get(id),
});
