import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { policyFields } from '../args.js';
import type { ReclaimRepository } from '../repository.js';

export default defineTool({
  name: 'reclaim.shorten_retention',
  title: 'Shorten a recovery policy\'s retention',
  description:
    'Lowers a recovery policy\'s retention_days, the only way to do so. The new retention applies at once to every snapshot still kept, ' +
    'so the snapshots older than it are out of retention for good: raising the retention again later does not bring them back. ' +
    'Needs policy_id and retention_days, below the current one: the current one is refused with invalid_arguments (it would cut ' +
    'nothing), and so is a higher one (raise it with reclaim.update_policy), before any confirmation is asked. Destructive, so the ' +
    'first call returns confirmation_required and the cut happens only when the same call is repeated with confirmed: true. ' +
    'Returns the policy, previous_retention_days, expired_snapshots (how many snapshots this cut put out of retention), and ' +
    'previous_window_start and window_start (every snapshot taken before window_start is now out of retention). Changes the policy ' +
    'record in Portico only; it deletes no backup held elsewhere.',
  scope: 'reclaim.policies.write',
  destructive: true,
  confirmation: 'Recovery policy {policy_id} will keep snapshots for {retention_days} days only, and every snapshot older than that will be out of retention for good.',
  input: {
    policy_id: z.string().max(100).describe('The policy id.'),
    retention_days: policyFields.retention_days.describe('The new, shorter retention in days (1-3650), below the current one.'),
  },
  check: ({ policy_id, retention_days }, { repos }: ToolContext<ReclaimRepository>) => repos.policies.checkShortenRetention(policy_id, retention_days),
  async handler({ policy_id, retention_days }, { repos, resourceUri }: ToolContext<ReclaimRepository>) {
    const cut = await repos.policies.shortenRetention(policy_id, retention_days);
    return { ...cut, uri: resourceUri('policies', cut.id) };
  },
});
