import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { RUN_STATUSES, type TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.list_workflow_runs',
  title: 'List workflow runs',
  description:
    'Lists workflow runs, newest first, optionally of one workflow and in one status (running, completed, cancelled). ' +
    'Returns { runs: [{ id, workflow_id, workflow_name, subject, status, current_position, step_count, started_at, completed_at, cancelled_at, ... }], next_cursor }. Read-only.',
  scope: 'terrain.runs.read',
  destructive: false,
  input: {
    workflow_id: z.string().min(1).max(200).optional().describe('Only runs of this workflow definition.'),
    status: z.enum(RUN_STATUSES).optional().describe('Only runs in this status.'),
    ...pageArgs,
  },
  handler: async (args, { repos }: ToolContext<TerrainRepository>) => {
    const page = await repos.runs.list(args);
    return { runs: page.items, next_cursor: page.next_cursor };
  },
});
