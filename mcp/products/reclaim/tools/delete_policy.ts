import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { ReclaimRepository } from '../repository.js';

export default defineTool({
  name: 'reclaim.delete_policy',
  title: 'Delete a recovery policy',
  description:
    'Permanently deletes a recovery policy and its schedule and retention history, so no recovery can be simulated from it any more. Needs policy_id; ' +
    'destructive, so the first call returns confirmation_required and the deletion happens only when the same call is repeated with ' +
    'confirmed: true. Returns what was deleted. Deletes the policy record in Portico only, not backups held elsewhere.',
  scope: 'reclaim.policies.write',
  destructive: true,
  confirmation: 'Recovery policy {policy_id} and its whole schedule history will be permanently deleted.',
  input: {
    policy_id: z.string().max(100).describe('The policy id.'),
  },
  async handler({ policy_id }, { repos }: ToolContext<ReclaimRepository>) {
    return repos.policies.delete(policy_id);
  },
});
