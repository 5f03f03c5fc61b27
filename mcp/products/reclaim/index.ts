/** reclaim: recovery policies (SPEC.md part 1.5). */
import { z } from 'zod';
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { defineProduct, definePrompt, defineResource, type ToolContext } from '../../../shared/catalog.js';
import { DAY_MS, instantArg } from '../common.js';
import { reclaimRepository, type PolicyInput, type ReclaimRepository } from './repository.js';
import createPolicy from './tools/create_policy.js';
import deletePolicy from './tools/delete_policy.js';
import getPolicy from './tools/get_policy.js';
import listPolicies from './tools/list_policies.js';
import shortenRetention from './tools/shorten_retention.js';
import simulateRecovery from './tools/simulate_recovery.js';
import updatePolicy from './tools/update_policy.js';

const policyResource = defineResource<ReclaimRepository>({
  collection: 'policies',
  title: 'Recovery policy',
  description: 'A recovery policy: target, retention, recovery point objective, status, and schedule and retention history.',
  scope: 'reclaim.policies.read',
  mimeType: 'application/json',
  read: (id, { repos }) => repos.policies.get(id),
});

const planRecovery = definePrompt({
  name: 'reclaim.plan_recovery',
  title: 'Plan a recovery',
  description:
    'Simulates a restore of a policy\'s target to a point in time (as reclaim.simulate_recovery does), embeds the policy and the result, ' +
    'and asks for a recovery runbook: what will be restored, what data will be lost, and what to check before and after.',
  scope: 'reclaim.policies.read',
  args: {
    policy_id: z.string().max(100).describe('The policy to recover from.'),
    point_in_time: instantArg.describe('The moment to recover to, ISO 8601 with time zone.'),
  },
  async get({ policy_id, point_in_time }, { repos, resourceUri }: ToolContext<ReclaimRepository>) {
    const policy = await repos.policies.get(policy_id);
    const simulation = await repos.policies.simulate(policy.id, Date.parse(point_in_time), Date.now());
    const text = simulation.outcome === 'recoverable'
      ? `Write a recovery runbook for restoring ${policy.target_kind} "${policy.target_name}" to ${simulation.point_in_time} under policy "${policy.name}". ` +
        `The simulation says the restore uses the snapshot of ${simulation.recovery_point} and loses ${simulation.data_loss_minutes} minutes of changes ` +
        `(RPO ${simulation.rpo_met ? 'met' : 'not met'}). List: who must approve, how to freeze writes, the restore steps, how to recover or re-enter ` +
        'the lost changes, and the checks that prove the restore worked. Keep to what the policy and simulation state.'
      : `A restore of ${policy.target_kind} "${policy.target_name}" to ${simulation.point_in_time} is not possible under policy "${policy.name}": ` +
        `${simulation.would_recover}. Explain this plainly, name the closest recoverable point, and suggest how the policy (retention_days, rpo_minutes) ` +
        'would have to change to cover such a case in future.';
    return [
      { role: 'user', content: { type: 'resource', resource: { uri: resourceUri('policies', policy.id), mimeType: 'application/json', text: JSON.stringify(policy, null, 2) } } },
      { role: 'user', content: { type: 'text', text: `Simulation result:\n${JSON.stringify(simulation, null, 2)}` } },
      { role: 'user', content: { type: 'text', text } },
    ];
  },
});

interface DemoPolicy extends Omit<PolicyInput, 'created_by'> {
  since_days: number;
  /** A later RPO change or pause, days ago. */
  then?: { days_ago: number; rpo_minutes?: number; status?: 'paused' | 'active' };
}

const DEMO: Record<string, DemoPolicy[]> = {
  acme: [
    { name: 'Orders database', target_kind: 'database', target_name: 'orders-db (PostgreSQL)', retention_days: 35, rpo_minutes: 60, since_days: 120, then: { days_ago: 20, rpo_minutes: 15 } },
    { name: 'Engineering file share', target_kind: 'file_share', target_name: 'eng-share', retention_days: 90, rpo_minutes: 240, since_days: 200 },
    { name: 'Marketing assets bucket', target_kind: 'object_bucket', target_name: 'acme-marketing-assets', retention_days: 30, rpo_minutes: 1440, since_days: 60, then: { days_ago: 10, status: 'paused' } },
  ],
  globex: [
    { name: 'ERP virtual machines', target_kind: 'virtual_machine', target_name: 'erp-app-01, erp-app-02', retention_days: 14, rpo_minutes: 30, since_days: 45 },
    { name: 'Collaboration workspace', target_kind: 'saas_workspace', target_name: 'Globex workspace', retention_days: 365, rpo_minutes: 720, since_days: 400 },
  ],
};

const seedDemo: DemoSeeder = async (trx, tenant, users) => {
  const repo = reclaimRepository(new TenantScope(trx, tenant.id));
  const now = Date.now();
  for (const { since_days, then, ...policy } of DEMO[tenant.slug] ?? []) {
    const created = await repo.policies.create({ ...policy, created_by: users[`admin@${tenant.slug}.example`] }, now - since_days * DAY_MS);
    if (then) await repo.policies.update(created.id, { rpo_minutes: then.rpo_minutes, status: then.status }, now - then.days_ago * DAY_MS);
  }
};

export const reclaim = defineProduct<ReclaimRepository>({
  id: 'reclaim',
  title: 'Reclaim',
  kind: 'Recovery policies',
  status: 'live',
  scopes: {
    'reclaim.policies.read': 'See your organization\'s recovery policies and simulate what a restore would recover',
    'reclaim.policies.write': 'Create, change, pause and delete recovery policies',
  },
  tools: [listPolicies, getPolicy, createPolicy, updatePolicy, shortenRetention, deletePolicy, simulateRecovery],
  resources: [policyResource],
  prompts: [planRecovery],
  entities: { policy: 'reclaim_policies' },
  seedDemo,
  repositories: (scope) => reclaimRepository(scope),
});
