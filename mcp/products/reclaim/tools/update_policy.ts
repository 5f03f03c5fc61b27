import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { policyFields } from '../args.js';
import { POLICY_STATUSES, type ReclaimRepository } from '../repository.js';

export default defineTool({
  name: 'reclaim.update_policy',
  title: 'Update a recovery policy',
  description:
    'Changes the given fields of a recovery policy (fields left out stay as they are). A new rpo_minutes starts a new schedule segment ' +
    'now; status paused stops the schedule and active resumes it; earlier segments are kept, so simulations of the past stay correct. ' +
    'retention_days may only be raised (or given unchanged) here: raising keeps every snapshot still retained for longer and is kept ' +
    'in the retention history, but brings back none that has already expired. A lower retention_days is refused with ' +
    'invalid_arguments and nothing is changed: a cut is made with reclaim.shorten_retention, which asks for confirmation. A name ' +
    'another policy has, whatever its case and spacing, is refused with conflict. Needs policy_id; returns the policy and the ' +
    'fields that changed. Does not delete or take any backup itself.',
  scope: 'reclaim.policies.write',
  destructive: false,
  idempotent: true,
  input: {
    policy_id: z.string().max(100).describe('The policy id.'),
    name: policyFields.name.optional(),
    target_name: policyFields.target_name.optional(),
    retention_days: policyFields.retention_days.optional(),
    rpo_minutes: policyFields.rpo_minutes.optional(),
    status: z.enum(POLICY_STATUSES).optional().describe('active, or paused to stop taking snapshots.'),
  },
  async handler({ policy_id, ...patch }, { repos, resourceUri }: ToolContext<ReclaimRepository>) {
    const policy = await repos.policies.update(policy_id, patch);
    return { ...policy, uri: resourceUri('policies', policy.id) };
  },
});
