import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg } from '../../common.js';
import type { TerrainRepository } from '../repository.js';

export default defineTool({
  name: 'terrain.create_workflow',
  title: 'Create a workflow definition',
  description:
    'Defines a workflow: a name unique in the organization whatever its case and spacing, an optional description and 1 to 50 ordered steps (each a name and optional instructions); steps are numbered 1..n in the order given. ' +
    'Returns the workflow with its steps. A definition cannot be edited afterwards, so runs already started always follow the steps they started with; ' +
    'refuses (conflict) a name that already exists, also in another case or spacing ("site  survey" when "Site survey" exists). Starts no run.',
  scope: 'terrain.workflows.write',
  destructive: false,
  input: {
    name: nameArg(200).describe('Name of the workflow, unique whatever its case and spacing, e.g. "Site survey".'),
    description: z.string().trim().max(2000).optional().describe('What the workflow is for.'),
    steps: z
      .array(z.strictObject({ name: nameArg(200).describe('Step name.'), instructions: z.string().trim().max(2000).optional().describe('What to do in this step.') }))
      .min(1)
      .max(50)
      .describe('The steps in the order they are done.'),
  },
  handler: async (args, { repos, user, resourceUri }: ToolContext<TerrainRepository>) => {
    const record = await repos.workflows.create(args, user.id);
    return { ...record, uri: resourceUri('workflows', record.id) };
  },
});
