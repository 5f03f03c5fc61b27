import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { instantArg } from '../../common.js';
import type { ReclaimRepository } from '../repository.js';

export default defineTool({
  name: 'reclaim.simulate_recovery',
  title: 'Simulate a recovery',
  description:
    'Works out, from a policy\'s schedule and retention history, what a restore to point_in_time would recover, evaluated as of as_of ' +
    '(default now; a later as_of projects the schedule forward). Returns outcome (recoverable, out_of_retention, before_first_snapshot ' +
    'or in_the_future), the recovery_point (the last snapshot at or before point_in_time), data_loss_minutes and whether the RPO was met, ' +
    'when that snapshot leaves retention, the snapshot that has expired if it is out of retention, and the retention window (earliest ' +
    'and latest recoverable points, retained and expired snapshot counts). Deterministic for the same inputs. Read-only: it restores ' +
    'nothing and does not contact the target.',
  scope: 'reclaim.policies.read',
  destructive: false,
  input: {
    policy_id: z.string().max(100).describe('The policy id.'),
    point_in_time: instantArg.describe('The moment to recover to, ISO 8601 with time zone, e.g. 2026-11-01T12:00:00Z.'),
    as_of: instantArg.optional().describe('When the recovery would run; default now.'),
  },
  async handler({ policy_id, point_in_time, as_of }, { repos }: ToolContext<ReclaimRepository>) {
    return repos.policies.simulate(policy_id, Date.parse(point_in_time), as_of ? Date.parse(as_of) : Date.now());
  },
});
