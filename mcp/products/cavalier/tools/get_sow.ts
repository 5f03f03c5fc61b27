import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.get_sow',
  title: 'Get a statement of work',
  description:
    'Returns one statement of work of your organization with its scope summary, status, milestones (title, due date, amount in minor ' +
    'units) and their total. Needs sow_id. Read-only.',
  scope: 'cavalier.sows.read',
  destructive: false,
  input: {
    sow_id: z.string().max(100).describe('The statement of work id.'),
  },
  async handler({ sow_id }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const sow = await repos.sows.get(sow_id);
    return { ...sow, uri: resourceUri('sows', sow.id) };
  },
});
