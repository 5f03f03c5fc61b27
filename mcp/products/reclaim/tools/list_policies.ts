import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { POLICY_STATUSES, TARGET_KINDS, type ReclaimRepository } from '../repository.js';

export default defineTool({
  name: 'reclaim.list_policies',
  title: 'List recovery policies',
  description:
    'Lists the recovery policies of your organization, newest first: name, target, retention in days, recovery point objective in ' +
    'minutes and status (active or paused). Optional filters: target_kind, status. Returns { policies, next_cursor }. Read-only.',
  scope: 'reclaim.policies.read',
  destructive: false,
  input: {
    target_kind: z.enum(TARGET_KINDS).optional().describe('Only policies protecting this kind of target.'),
    status: z.enum(POLICY_STATUSES).optional().describe('Only active or only paused policies.'),
    ...pageArgs,
  },
  async handler(args, { repos }: ToolContext<ReclaimRepository>) {
    const page = await repos.policies.list(args);
    return { policies: page.items, next_cursor: page.next_cursor };
  },
});
