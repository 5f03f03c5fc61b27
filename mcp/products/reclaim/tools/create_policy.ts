import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { policyFields } from '../args.js';
import type { ReclaimRepository } from '../repository.js';

export default defineTool({
  name: 'reclaim.create_policy',
  title: 'Create a recovery policy',
  description:
    'Creates an active recovery policy: a name (unique in your organization whatever its case and spacing, else code conflict), ' +
    'the target (kind and name), how many days each snapshot is kept, and the recovery point objective in minutes, which is also ' +
    'how often a snapshot is taken. Its schedule starts now. Returns the policy. Records the policy only: it does not connect to ' +
    'the target or take a backup itself.',
  scope: 'reclaim.policies.write',
  destructive: false,
  input: { ...policyFields },
  async handler(args, { repos, user, resourceUri }: ToolContext<ReclaimRepository>) {
    const policy = await repos.policies.create({ ...args, created_by: user.id });
    return { ...policy, uri: resourceUri('policies', policy.id) };
  },
});
