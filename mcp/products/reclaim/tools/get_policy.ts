import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { SCHEDULE_SHOWN, type ReclaimRepository } from '../repository.js';

export default defineTool({
  name: 'reclaim.get_policy',
  title: 'Get a recovery policy',
  description:
    'Returns one recovery policy of your organization with its schedule history: each segment\'s start, end (null while current) and ' +
    'the RPO in force, from which snapshots are taken; and its retention history: each retention_days with when it was in force. ' +
    `The newest ${SCHEDULE_SHOWN} of each, with schedule_total and retention_history_total counting all of them and schedule_truncated and ` +
    'retention_history_truncated true when older ones are left out. Needs policy_id. Read-only.',
  scope: 'reclaim.policies.read',
  destructive: false,
  input: {
    policy_id: z.string().max(100).describe('The policy id.'),
  },
  async handler({ policy_id }, { repos, resourceUri }: ToolContext<ReclaimRepository>) {
    const policy = await repos.policies.get(policy_id);
    return { ...policy, uri: resourceUri('policies', policy.id) };
  },
});
