import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg } from '../../common.js';
import type { TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.start_workflow_run',
  title: 'Start a workflow run',
  description:
    'Starts a run of a workflow definition for a subject (what the run is about, e.g. "Parcel 12, north field"). The run begins at step 1, status running; ' +
    'the start is recorded with who and when. Returns the run with its steps, current step and history.',
  scope: 'terrain.runs.write',
  destructive: false,
  input: {
    workflow_id: z.string().min(1).max(200).describe('Id of the workflow definition to run.'),
    subject: nameArg(200).describe('What this run is about.'),
    note: z.string().trim().max(1000).optional().describe('A note recorded with the start.'),
  },
  handler: async (args, { repos, user, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.runs.start(args, user.id);
    return { ...record, uri: resourceUri('runs', record.id) };
  },
});
