import { z } from 'zod';
import { definePrompt, type ToolContext } from '../../../../shared/catalog.js';
import { embeddedResource } from '../../common.js';
import type { TerrainRepository } from '../repository.js';

export default definePrompt({
  name: 'terrain.brief_current_step',
  title: 'Brief the current step of a workflow run',
  description:
    'A briefing for whoever works on a workflow run next: what the run is about, what was done so far (with the notes left at each step), and the instructions of the current step.',
  scope: 'terrain.runs.read',
  args: { run_id: z.string().min(1).max(200).describe('Id of the workflow run.') },
  get: async ({ run_id }, { repos, resourceUri }: ToolContext<TerrainRepository>) => {
    const run = await repos.runs.get(run_id);
    const done = run.history
      .filter((event) => event.action === 'advanced')
      .map((event) => `- Step ${event.step_position} "${event.step_name}" done at ${event.at}${event.note ? `: ${event.note}` : ''}`)
      .join('\n') || '- nothing yet';
    const now = run.current_step
      ? `Current step ${run.current_step.position} of ${run.step_count}: "${run.current_step.name}".\nInstructions: ${run.current_step.instructions ?? 'none written'}`
      : `The run is ${run.status}; there is no current step.`;
    return [
      {
        role: 'user' as const,
        content: {
          type: 'text' as const,
          text:
            `Brief me on the workflow run "${run.subject}" (workflow "${run.workflow_name}", status ${run.status}).\n\n` +
            `Done so far:\n${done}\n\n${now}\n\n` +
            'Summarise what has been established so far, list what I must check or produce to finish the current step, and flag anything in the notes that needs attention first.',
        },
      },
      {
        role: 'user' as const,
        content: embeddedResource(resourceUri('runs', run.id), run),
      },
    ];
  },
});
