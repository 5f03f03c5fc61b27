import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.complete_sow',
  title: 'Complete a statement of work',
  description:
    'Marks a signed statement of work as completed. Completed is final: the statement of work can never change status again, so this ' +
    'is destructive: the first call returns confirmation_required and it is completed only when the same call is repeated with ' +
    'confirmed: true. A draft (not yet signed) or already completed statement of work is refused with code conflict. Needs sow_id; ' +
    'returns the statement of work with previous_status. Only records the status: it invoices nothing and notifies no one.',
  scope: 'cavalier.sows.write',
  destructive: true,
  confirmation: 'Statement of work {sow_id} will be marked completed, which is final: its status can never change again.',
  input: {
    sow_id: z.string().max(100).describe('The statement of work id.'),
  },
  check: ({ sow_id }, { repos }: ToolContext<CavalierRepository>) => repos.sows.checkStatus(sow_id, 'completed'),
  async handler({ sow_id }, { repos, resourceUri }: ToolContext<CavalierRepository>) {
    const sow = await repos.sows.setStatus(sow_id, 'completed');
    return { ...sow, uri: resourceUri('sows', sow.id) };
  },
});
