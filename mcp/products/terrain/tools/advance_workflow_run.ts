import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.advance_workflow_run',
  title: 'Advance a workflow run',
  description:
    'Marks the current step of a running workflow run as done (recording who, when and an optional note) and moves the run to the next step; ' +
    'after the last step the run becomes completed. Returns the run with its steps, current step and history. ' +
    'Moves exactly one step per call; refuses (conflict) a run that is completed or cancelled. Steps cannot be skipped or undone.',
  scope: 'terrain.runs.write',
  destructive: false,
  input: {
    run_id: z.string().min(1).max(200).describe('Id of the running workflow run.'),
    note: z.string().trim().max(1000).optional().describe('A note about the finished step (findings, evidence).'),
  },
  handler: async ({ run_id, note }, { repos, user, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.runs.advance(run_id, note, user.id);
    return { ...record, uri: resourceUri('runs', record.id) };
  },
});
