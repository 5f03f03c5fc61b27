import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import type { TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.list_workflows',
  title: 'List workflow definitions',
  description:
    "Lists the organization's workflow definitions, newest first. Returns { workflows: [{ id, name, description, step_count, created_at }], next_cursor }; " +
    'use terrain.get_workflow for the ordered steps. Read-only.',
  scope: 'terrain.workflows.read',
  destructive: false,
  input: { ...pageArgs },
  handler: async (args, { repos }: ToolContext<TerrainRepository>) => {
    const page = await repos.workflows.list(args);
    return { workflows: page.items, next_cursor: page.next_cursor };
  },
});
