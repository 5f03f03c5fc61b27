import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.get_workflow_run',
  title: 'Get a workflow run',
  description:
    'Returns one workflow run: status, subject, the current step with its instructions, every step with its state (done, current, pending, not_reached) ' +
    'and the full history of starts, advances, completion and cancellation in order, each with who and when. Read-only.',
  scope: 'terrain.runs.read',
  destructive: false,
  input: { run_id: z.string().min(1).max(200).describe('Id of the workflow run.') },
  handler: async ({ run_id }, { repos, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.runs.get(run_id);
    return { ...record, uri: resourceUri('runs', record.id) };
  },
});
