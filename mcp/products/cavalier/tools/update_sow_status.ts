import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { OPEN_SOW_STATUSES, type CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.update_sow_status',
  title: 'Change a statement of work\'s status',
  description:
    'Moves a statement of work from draft to signed; any other move is refused with code conflict. Completing a signed statement of ' +
    'work is final and is done with cavalier.complete_sow, which asks for confirmation. Needs sow_id and status; returns the statement ' +
    'of work with previous_status. Only records the status: it collects no signature.',
  scope: 'cavalier.sows.write',
  destructive: false,
  input: {
    sow_id: z.string().max(100).describe('The statement of work id.'),
    status: z.enum(OPEN_SOW_STATUSES).describe('The new status (completed: cavalier.complete_sow).'),
  },
  async handler({ sow_id, status }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const sow = await repos.sows.setStatus(sow_id, status);
    return { ...sow, uri: resourceUri('sows', sow.id) };
  },
});
