import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.get_workflow',
  title: 'Get a workflow definition',
  description: 'Returns one workflow definition with its steps in order (position 1 first), each with its name and instructions. Read-only.',
  scope: 'terrain.workflows.read',
  destructive: false,
  input: { workflow_id: z.string().min(1).max(200).describe('Id of the workflow definition.') },
  handler: async ({ workflow_id }, { repos, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.workflows.get(workflow_id);
    return { ...record, uri: resourceUri('workflows', record.id) };
  },
});
