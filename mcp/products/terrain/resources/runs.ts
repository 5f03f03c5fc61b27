import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { TerrainRepository } from '../repository.js';

export default defineResource({
  collection: 'runs',
  title: 'Workflow run',
  description: 'One workflow run with its status, every step and its state, and the history of who moved it when.',
  scope: 'terrain.runs.read',
  mimeType: 'application/json',
  read: async (id, { repos, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.runs.get(id);
    return { ...record, uri: resourceUri('runs', record.id) };
  },
});
