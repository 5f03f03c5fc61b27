import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.cancel_workflow_run',
  title: 'Cancel a workflow run',
  description:
    'Cancels a running workflow run where it stands: status becomes cancelled, with who, when and an optional reason recorded in its history. Returns the run. ' +
    'A cancelled run cannot be resumed or advanced (start a new run instead); completed runs cannot be cancelled. The workflow definition is not affected.',
  scope: 'terrain.runs.write',
  destructive: true,
  confirmation: 'Workflow run {run_id} will be cancelled at its current step and can never be resumed.',
  input: {
    run_id: z.string().min(1).max(200).describe('Id of the running workflow run.'),
    reason: z.string().trim().max(500).optional().describe('Why the run is cancelled.'),
  },
  check: ({ run_id }, { repos }: ToolContext<TerrainRepository>) => repos.runs.checkCancel(run_id),
  handler: async ({ run_id, reason }, { repos, user, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.runs.cancel(run_id, reason, user.id);
    return { ...record, uri: resourceUri('runs', record.id) };
  },
});
