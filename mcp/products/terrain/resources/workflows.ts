import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { TerrainRepository } from '../repository.js';

export default defineResource({
  collection: 'workflows',
  title: 'Workflow definition',
  description: 'One workflow definition with its ordered steps and their instructions.',
  scope: 'terrain.workflows.read',
  mimeType: 'application/json',
  read: async (id, { repos, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.workflows.get(id);
    return { ...record, uri: resourceUri('workflows', record.id) };
  },
});
