/** reclaim through the MCP pipeline with a real SDK client, on every database. */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { TenantScope } from '../../db/tenant_scope.js';
import { reclaim } from '../../mcp/products/reclaim/index.js';
import { reclaimRepository } from '../../mcp/products/reclaim/repository.js';
import { connect } from '../helpers/mcp.js';
import {
  assertConfirmationFlow, assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertRefusedUnconfirmed, assertToolError, callConfirmed, okConfirmed, productSuite,
  type ProductEnv, type Tenant,
} from './product_suite.js';

const each = productSuite('reclaim');
const ALL = Object.keys(reclaim.scopes);
const READ = ['reclaim.policies.read'];
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const at = (ms: number) => new Date(ms).toISOString();
const unique = (prefix: string) => `${prefix} ${Math.random().toString(36).slice(2, 8)}`;

/** A policy whose protection started `sinceMs` ago (as the demo seeder makes them): it has snapshots a cut can expire. */
async function policySince(env: ProductEnv, tenant: Tenant, sinceMs: number, fields: { retention_days: number; rpo_minutes: number }) {
  const repo = reclaimRepository(new TenantScope(env.server.db, env.server.tenants[tenant].id));
  return repo.policies.create({ name: unique('Cut'), target_kind: 'database', target_name: 'ledger-db', ...fields }, Date.now() - sinceMs);
}

each('every reclaim tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of reclaim.tools) {
    await assertInsufficientScope(t, env, 'reclaim', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each('create, get, list and update policies; names are unique per organization', async (t, env) => {
  const name = unique('Billing DB');
  const policy = await env.ok(t, 'acme', ALL, 'reclaim.create_policy', { name, target_kind: 'database', target_name: 'billing-db', retention_days: 30, rpo_minutes: 60 });
  t.like(policy, { name, target_kind: 'database', target_name: 'billing-db', retention_days: 30, rpo_minutes: 60, status: 'active' });
  t.is(policy.schedule.length, 1);
  t.like(policy.schedule[0], { ends_at: null, rpo_minutes: 60 });
  const duplicate = await assertToolError(t, env, 'acme', ALL, 'reclaim.create_policy', { name, target_kind: 'file_share', target_name: 'x', retention_days: 1, rpo_minutes: 5 }, 'conflict');
  t.regex(duplicate.message, /already exists/);
  // Another organization may use the same name.
  await env.ok(t, 'globex', ALL, 'reclaim.create_policy', { name, target_kind: 'database', target_name: 'billing-db', retention_days: 30, rpo_minutes: 60 });

  const faster = await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, rpo_minutes: 15, target_name: 'billing-db' });
  t.deepEqual(faster.changed, ['rpo_minutes']);
  t.deepEqual(faster.schedule.map((s: any) => s.rpo_minutes), [60, 15]);
  t.is(faster.schedule[0].ends_at, faster.schedule[1].starts_at);
  const paused = await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, status: 'paused' });
  t.is(paused.status, 'paused');
  t.truthy(paused.schedule[1].ends_at);
  const slower = await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, rpo_minutes: 30 });
  t.is(slower.schedule.length, 2, 'a paused policy takes no snapshots, whatever its RPO');
  const resumed = await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, status: 'active' });
  t.deepEqual(resumed.schedule.map((s: any) => [s.rpo_minutes, s.ends_at === null]), [[60, false], [15, false], [30, true]]);
  const unchanged = await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, retention_days: 30 });
  t.deepEqual(unchanged.changed, []);

  const read = await env.ok(t, 'acme', READ, 'reclaim.get_policy', { policy_id: policy.id });
  t.like(read, { rpo_minutes: 30, status: 'active' });
  const paused2 = await env.ok(t, 'acme', READ, 'reclaim.list_policies', { status: 'paused', target_kind: 'object_bucket' });
  t.deepEqual(paused2.policies.map((p: any) => p.name), ['Marketing assets bucket']);

  await assertInvalidArguments(t, env, 'acme', ALL, 'reclaim.create_policy', { name: 'x', target_kind: 'tape', target_name: 'x', retention_days: 1, rpo_minutes: 5 }, 'target_kind');
  await assertInvalidArguments(t, env, 'acme', ALL, 'reclaim.create_policy', { name: 'x', target_kind: 'database', target_name: 'x', retention_days: 0, rpo_minutes: 5 }, 'retention_days');
  await assertInvalidArguments(t, env, 'acme', ALL, 'reclaim.create_policy', { name: 'x', target_kind: 'database', target_name: 'x', retention_days: 1, rpo_minutes: 4 }, 'rpo_minutes');
  await assertInvalidArguments(t, env, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, status: 'deleted' }, 'status');
});

each('simulate_recovery derives the recovery point, data loss and retention from the schedule', async (t, env) => {
  const policy = await env.ok(t, 'globex', ALL, 'reclaim.create_policy', { name: unique('Sim'), target_kind: 'virtual_machine', target_name: 'vm-7', retention_days: 2, rpo_minutes: 60 });
  const start = Date.parse(policy.schedule[0].starts_at);
  const simulate = (pointInTime: number, asOf: number) => env.ok(t, 'globex', READ, 'reclaim.simulate_recovery', { policy_id: policy.id, point_in_time: at(pointInTime), as_of: at(asOf) });

  const recoverable = await simulate(start + 150 * MIN, start + DAY);
  t.like(recoverable, {
    outcome: 'recoverable', recovery_point: at(start + 120 * MIN), data_loss_minutes: 30, rpo_met: true,
    expires_at: at(start + 120 * MIN + 2 * DAY), expired_recovery_point: null,
  });
  t.deepEqual(recoverable.retention, {
    retention_days: 2, window_start: at(start - DAY), retained_snapshots: 25, earliest_recoverable_point: at(start),
    latest_recoverable_point: at(start + DAY), expired_snapshots: 0,
  });
  t.regex(recoverable.would_recover, /virtual machine "vm-7" as it was at .* losing 30 minutes of changes/);
  t.like(recoverable.policy, { id: policy.id, rpo_minutes: 60 });

  const expired = await simulate(start + 150 * MIN, start + 3 * DAY);
  t.like(expired, { outcome: 'out_of_retention', recovery_point: null, expired_recovery_point: at(start + 120 * MIN), expires_at: at(start + 120 * MIN + 2 * DAY) });
  t.deepEqual(expired.retention, {
    retention_days: 2, window_start: at(start + DAY), retained_snapshots: 49, earliest_recoverable_point: at(start + DAY),
    latest_recoverable_point: at(start + 3 * DAY), expired_snapshots: 24,
  });

  t.like(await simulate(start - MIN, start + DAY), { outcome: 'before_first_snapshot', recovery_point: null });
  t.like(await simulate(start + 2 * DAY, start + DAY), { outcome: 'in_the_future', recovery_point: null });
  // The same inputs give the same answer.
  t.deepEqual(await simulate(start + 150 * MIN, start + DAY), recoverable);

  await assertInvalidArguments(t, env, 'globex', READ, 'reclaim.simulate_recovery', { policy_id: policy.id, point_in_time: '2026-11-01 12:00' }, 'point_in_time');
  await assertInvalidArguments(t, env, 'globex', READ, 'reclaim.simulate_recovery', { policy_id: policy.id, point_in_time: '2026-13-01T00:00:00Z' }, 'point_in_time');
  await assertInvalidArguments(t, env, 'globex', READ, 'reclaim.simulate_recovery', { policy_id: policy.id }, 'point_in_time');
});

each('simulations use the schedule in force at the time: RPO changes and pauses of the demo policies', async (t, env) => {
  const policies = (await env.ok(t, 'acme', READ, 'reclaim.list_policies', {})).policies;
  const orders = await env.ok(t, 'acme', READ, 'reclaim.get_policy', { policy_id: policies.find((p: any) => p.name === 'Orders database').id });
  t.deepEqual(orders.schedule.map((s: any) => s.rpo_minutes), [60, 15]);
  const first = Date.parse(orders.schedule[0].starts_at);
  const change = Date.parse(orders.schedule[1].starts_at);
  t.is(change - first, 100 * DAY);
  const asOf = change + 10 * DAY; // retention 35 days: the window starts 25 days before the change
  const simulate = (pointInTime: number) => env.ok(t, 'acme', READ, 'reclaim.simulate_recovery', { policy_id: orders.id, point_in_time: at(pointInTime), as_of: at(asOf) });

  t.like(await simulate(change - 23 * MIN), { outcome: 'recoverable', recovery_point: at(change - HOUR), data_loss_minutes: 37, rpo_met: true });
  t.like(await simulate(change + 20 * MIN), { outcome: 'recoverable', recovery_point: at(change + 15 * MIN), data_loss_minutes: 5, rpo_met: true });
  const old = await simulate(first + 5 * DAY);
  t.like(old, { outcome: 'out_of_retention', expired_recovery_point: at(first + 5 * DAY) });
  t.is(old.retention.earliest_recoverable_point, at(change - 25 * DAY));
  t.is(old.retention.retained_snapshots, 25 * 24 + 10 * 96 + 1);
  t.is(old.retention.expired_snapshots, 75 * 24);

  // Paused ten days ago: a point during the pause falls back to the last daily snapshot before it.
  const bucket = await env.ok(t, 'acme', READ, 'reclaim.get_policy', { policy_id: policies.find((p: any) => p.name === 'Marketing assets bucket').id });
  const segment = bucket.schedule[0];
  const pausedAt = Date.parse(segment.ends_at);
  const duringPause = await env.ok(t, 'acme', READ, 'reclaim.simulate_recovery', { policy_id: bucket.id, point_in_time: at(pausedAt + 5 * DAY), as_of: at(pausedAt + 6 * DAY) });
  t.like(duringPause, { outcome: 'recoverable', recovery_point: at(pausedAt - DAY), data_loss_minutes: 6 * 24 * 60, rpo_met: false });
});

each('a retention cut expires snapshots for good: raising the retention again does not bring them back', async (t, env) => {
  const orders = (await env.ok(t, 'acme', READ, 'reclaim.list_policies', {})).policies.find((p: any) => p.name === 'Orders database');
  const point = Date.now() - 20 * DAY;
  const simulate = (pointInTime: number, asOf?: number) => env.ok(t, 'acme', READ, 'reclaim.simulate_recovery', {
    policy_id: orders.id, point_in_time: at(pointInTime), ...(asOf === undefined ? {} : { as_of: at(asOf) }),
  });
  const before = await simulate(point);
  t.like(before, { outcome: 'recoverable', retention: { retention_days: 35 } });

  const cut = await okConfirmed(t, env, 'acme', ALL, 'reclaim.shorten_retention', { policy_id: orders.id, retention_days: 1 });
  const cutAt = Date.parse(cut.updated_at);
  t.like(await simulate(point), { outcome: 'out_of_retention', expired_recovery_point: before.recovery_point, expires_at: at(cutAt) });

  const raised = await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: orders.id, retention_days: 35 });
  const raisedAt = Date.parse(raised.updated_at);
  const after = await simulate(point);
  t.like(after, { outcome: 'out_of_retention', expired_recovery_point: before.recovery_point, expires_at: at(cutAt) });
  // The window starts where the one-day retention left it when it ended.
  t.like(after.retention, { retention_days: 35, window_start: at(raisedAt - 1 - DAY) });
  const earliest = Date.parse(after.retention.earliest_recoverable_point) - (raisedAt - 1 - DAY);
  t.true(earliest >= 0 && earliest < 15 * MIN, 'the earliest recoverable point is the first snapshot in that window');

  // A snapshot the cut kept is kept for the raised retention now.
  const recent = await simulate(Date.now() - 2 * HOUR);
  t.is(recent.outcome, 'recoverable');
  t.is(recent.expires_at, at(Date.parse(recent.recovery_point) + 35 * DAY));
  // As of a moment before the cut, the point was still recoverable under the retention in force then.
  t.like(await simulate(point, cutAt - 1), { outcome: 'recoverable', recovery_point: before.recovery_point, retention: { retention_days: 35 } });

  // The policy shows its retention history as it shows its schedule.
  const read = await env.ok(t, 'acme', READ, 'reclaim.get_policy', { policy_id: orders.id });
  t.deepEqual(read.retention_history.map((r: any) => [r.retention_days, r.ends_at]), [[35, at(cutAt)], [1, at(raisedAt)], [35, null]]);
  t.like(read, { retention_days: 35, retention_history_total: 3, retention_history_truncated: false });
});

each('update_policy refuses a retention cut, naming reclaim.shorten_retention, and changes nothing; raising still works', async (t, env) => {
  const policy = await env.ok(t, 'acme', ALL, 'reclaim.create_policy', { name: unique('Keep'), target_kind: 'file_share', target_name: 'legal', retention_days: 30, rpo_minutes: 60 });
  const stored = async () => ({
    policy: await env.server.db('reclaim_policies').where({ id: policy.id }).first(),
    schedule: await env.server.db('reclaim_schedule_segments').where({ policy_id: policy.id }).orderBy('id'),
    retention: await env.server.db('reclaim_retention_segments').where({ policy_id: policy.id }).orderBy('id'),
  });
  const before = await stored();

  // The other fields of the call are not applied either.
  const client = await env.client('acme', ALL);
  const args = { policy_id: policy.id, name: unique('Renamed'), rpo_minutes: 15, status: 'paused', retention_days: 7 };
  const error = await t.throwsAsync(client.callTool({ name: 'reclaim.update_policy', arguments: args }), { instanceOf: McpError });
  t.like((error as McpError & { data?: unknown }).data, { code: 'invalid_arguments', field: 'retention_days', current_retention_days: 30 });
  t.regex(error!.message, /retention_days: 7 is below the current 30; .*reclaim\.shorten_retention.*nothing was changed/);
  t.deepEqual(await stored(), before);

  const raised = await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, retention_days: 45, rpo_minutes: 30 });
  t.deepEqual(raised.changed, ['retention_days', 'rpo_minutes']);
  t.like(raised, { retention_days: 45, rpo_minutes: 30 });
  t.deepEqual(raised.retention_history.map((r: any) => [r.retention_days, r.ends_at === null]), [[30, false], [45, true]]);
  t.deepEqual((await env.ok(t, 'acme', ALL, 'reclaim.update_policy', { policy_id: policy.id, retention_days: 45 })).changed, []);
});

each('shorten_retention asks for confirmation, then cuts the retention and says what it expired', async (t, env) => {
  const policy = await policySince(env, 'globex', 10 * DAY, { retention_days: 30, rpo_minutes: 60 });
  const start = Date.parse(policy.schedule[0].starts_at!);
  const point = start + 3 * DAY + 30 * MIN;
  const simulate = (asOf?: number) => env.ok(t, 'globex', READ, 'reclaim.simulate_recovery', {
    policy_id: policy.id, point_in_time: at(point), ...(asOf === undefined ? {} : { as_of: at(asOf) }),
  });
  t.like(await simulate(), { outcome: 'recoverable', recovery_point: at(start + 3 * DAY) });

  const args = { policy_id: policy.id, retention_days: 2 };
  const done = await callConfirmed(t, env, 'globex', ALL, 'reclaim.shorten_retention', args, {
    sentence: new RegExp(`^Recovery policy ${policy.id} will keep snapshots for 2 days only, and every snapshot older than that will be out of retention for good\\.$`),
    unchanged: async () => {
      t.is(Number((await env.server.db('reclaim_policies').where({ id: policy.id }).first()).retention_days), 30);
      t.is((await env.server.db('reclaim_retention_segments').where({ policy_id: policy.id })).length, 1);
    },
  });
  t.false(done.isError, JSON.stringify(done.structured));
  const cut = done.structured;
  const cutAt = Date.parse(cut.updated_at);
  t.like(cut, { id: policy.id, retention_days: 2, previous_retention_days: 30, changed: ['retention_days'], uri: `portico://reclaim/policies/${policy.id}` });
  t.is(cut.previous_window_start, at(cutAt - 30 * DAY));
  t.is(cut.window_start, at(cutAt - 2 * DAY));
  // Hourly since `start`, the cut less than an hour after start + 10 days: the snapshots of the first 8 days and the one at 8 days.
  t.true(cutAt > start + 10 * DAY && cutAt <= start + 10 * DAY + HOUR);
  t.is(cut.expired_snapshots, 8 * 24 + 1);
  t.deepEqual(cut.retention_history.map((r: any) => [r.retention_days, r.ends_at]), [[30, at(cutAt)], [2, null]]);

  // simulate_recovery agrees: the point is out of retention since the cut, and so are the snapshots the cut counted.
  const after = await simulate(cutAt);
  t.like(after, { outcome: 'out_of_retention', expired_recovery_point: at(start + 3 * DAY), expires_at: at(cutAt) });
  t.like(after.retention, { retention_days: 2, window_start: cut.window_start, expired_snapshots: cut.expired_snapshots });
  t.like(await simulate(cutAt - 1), { outcome: 'recoverable', retention: { retention_days: 30, expired_snapshots: 0 } });

  // Only a lower retention is a cut: the same one again is refused, and a higher one is update_policy's.
  const again = await assertRefusedUnconfirmed(t, env, 'globex', ALL, 'reclaim.shorten_retention', args, 'invalid_arguments');
  t.like(again.details, { field: 'retention_days', current_retention_days: 2 });
  t.regex(again.message, /retention_days: 2 is already the policy's retention; a cut must be below it; nothing was changed/);
  const refused = await assertRefusedUnconfirmed(t, env, 'globex', ALL, 'reclaim.shorten_retention', { policy_id: policy.id, retention_days: 5 }, 'invalid_arguments');
  t.like(refused.details, { field: 'retention_days', current_retention_days: 2 });
  t.regex(refused.message, /retention_days: 5 is above the current 2; .*reclaim\.update_policy/);
  t.is(Number((await env.server.db('reclaim_policies').where({ id: policy.id }).first()).retention_days), 2);
});

each('shorten_retention refuses a value it would refuse anyway before asking anyone to confirm it', async (t, env) => {
  const policy = await env.ok(t, 'acme', ALL, 'reclaim.create_policy', { name: unique('Not cut'), target_kind: 'database', target_name: 'crm-db', retention_days: 30, rpo_minutes: 60 });
  const retentionOf = async () => Number((await env.server.db('reclaim_policies').where({ id: policy.id }).first()).retention_days);

  // Not a cut: the refusal a confirmed call would meet, given at once and with nothing pending.
  const above = await assertRefusedUnconfirmed(t, env, 'acme', ALL, 'reclaim.shorten_retention', { policy_id: policy.id, retention_days: 45 }, 'invalid_arguments');
  t.like(above.details, { field: 'retention_days', current_retention_days: 30 });
  t.regex(above.message, /retention_days: 45 is above the current 30; .*reclaim\.update_policy.*nothing was changed/);
  // The current retention is no cut either: nobody is asked to confirm a cut that expires nothing.
  const same = await assertRefusedUnconfirmed(t, env, 'acme', ALL, 'reclaim.shorten_retention', { policy_id: policy.id, retention_days: 30 }, 'invalid_arguments');
  t.like(same.details, { field: 'retention_days', current_retention_days: 30 });
  t.regex(same.message, /retention_days: 30 is already the policy's retention/);
  t.is((await env.server.db('reclaim_retention_segments').where({ policy_id: policy.id })).length, 1);
  // Out of range, unknown and foreign policies are refused as they were, before any confirmation too.
  await assertRefusedUnconfirmed(t, env, 'acme', ALL, 'reclaim.shorten_retention', { policy_id: policy.id, retention_days: 0 }, 'invalid_arguments');
  await assertRefusedUnconfirmed(t, env, 'acme', ALL, 'reclaim.shorten_retention', { policy_id: '00000000-0000-4000-8000-000000000002', retention_days: 7 }, 'not_found');
  const foreign = (await env.ok(t, 'globex', READ, 'reclaim.list_policies', {})).policies.at(-1);
  await assertCrossTenant(t, env, 'reclaim', 'acme', ALL, 'reclaim.shorten_retention', { policy_id: foreign.id, retention_days: 1 });
  t.is(await retentionOf(), 30);

  // A client that asks its person directly (elicitation) does not ask for a cut that cannot happen.
  const asked: string[] = [];
  const { client, close } = await connect(env.server, {
    product: 'reclaim', tenant: 'acme', scopes: ALL, elicit: (message) => (asked.push(message), { action: 'accept', content: { confirm: true } }),
  });
  try {
    const error = await t.throwsAsync(client.callTool({ name: 'reclaim.shorten_retention', arguments: { policy_id: policy.id, retention_days: 31 } }), { instanceOf: McpError });
    t.like((error as McpError & { data?: unknown }).data, { code: 'invalid_arguments', field: 'retention_days', current_retention_days: 30 });
    t.deepEqual(asked, []);
  } finally {
    await close();
  }

  // Confirmed while it was a cut, refused once it no longer is: the confirmed call meets the same refusal.
  const pending = await env.call('acme', ALL, 'reclaim.shorten_retention', { policy_id: policy.id, retention_days: 20 });
  t.is(pending.structured.code, 'confirmation_required');
  await okConfirmed(t, env, 'acme', ALL, 'reclaim.shorten_retention', { policy_id: policy.id, retention_days: 10 });
  const client2 = await env.client('acme', ALL);
  const stale = await t.throwsAsync(client2.callTool({ name: 'reclaim.shorten_retention', arguments: { policy_id: policy.id, retention_days: 20, confirmed: true } }), { instanceOf: McpError });
  const fresh = await assertRefusedUnconfirmed(t, env, 'acme', ALL, 'reclaim.shorten_retention', { policy_id: policy.id, retention_days: 20 }, 'invalid_arguments');
  t.is(stale!.message, fresh.message);
  t.like((stale as McpError & { data?: unknown }).data, fresh.details);
  t.is(await retentionOf(), 10);
});

each('delete_policy follows the confirmation protocol and takes the schedule with it', async (t, env) => {
  const policy = await env.ok(t, 'acme', ALL, 'reclaim.create_policy', { name: unique('Doomed'), target_kind: 'saas_workspace', target_name: 'wiki', retention_days: 7, rpo_minutes: 1440 });
  const done = await assertConfirmationFlow(t, env, 'acme', ALL, 'reclaim.delete_policy', { policy_id: policy.id }, {
    sentence: new RegExp(`Recovery policy ${policy.id} and its whole schedule history will be permanently deleted`),
    unchanged: async () => {
      t.truthy(await env.server.db('reclaim_policies').where({ id: policy.id }).first());
    },
  });
  t.like(done, { deleted: true, id: policy.id, target: 'saas_workspace wiki', schedule_segments_deleted: 1 });
  t.is((await env.server.db('reclaim_schedule_segments').where({ policy_id: policy.id })).length, 0);
});

each('policy ids of another tenant are forbidden_cross_tenant', async (t, env) => {
  const foreign = (await env.ok(t, 'globex', READ, 'reclaim.list_policies', {})).policies.at(-1).id;
  await assertCrossTenant(t, env, 'reclaim', 'acme', READ, 'reclaim.get_policy', { policy_id: foreign });
  await assertCrossTenant(t, env, 'reclaim', 'acme', READ, 'reclaim.simulate_recovery', { policy_id: foreign, point_in_time: at(Date.now()) });
  await assertCrossTenant(t, env, 'reclaim', 'acme', ALL, 'reclaim.update_policy', { policy_id: foreign, retention_days: 1 });
  await assertCrossTenant(t, env, 'reclaim', 'acme', ALL, 'reclaim.shorten_retention', { policy_id: foreign, retention_days: 1, confirmed: true });
  await assertCrossTenant(t, env, 'reclaim', 'acme', ALL, 'reclaim.delete_policy', { policy_id: foreign, confirmed: true });
  const row = await env.server.db('reclaim_policies').where({ id: foreign }).first();
  t.not(Number(row.retention_days), 1);
  await assertToolError(t, env, 'acme', READ, 'reclaim.get_policy', { policy_id: '00000000-0000-4000-8000-000000000002' }, 'not_found');
});

each('the policy resource and the plan_recovery prompt work end to end', async (t, env) => {
  const client = await env.client('globex', ALL);
  const policies = (await env.ok(t, 'globex', READ, 'reclaim.list_policies', { target_kind: 'virtual_machine' })).policies;
  const erp = policies.find((p: any) => p.name === 'ERP virtual machines');
  const resource = JSON.parse(((await client.readResource({ uri: `portico://reclaim/policies/${erp.id}` })).contents[0] as { text: string }).text);
  t.like(resource, { name: 'ERP virtual machines', retention_days: 14, rpo_minutes: 30 });

  const recent = at(Date.now() - 2 * HOUR);
  const prompt = await client.getPrompt({ name: 'reclaim.plan_recovery', arguments: { policy_id: erp.id, point_in_time: recent } });
  t.is((prompt.messages[0].content as { resource: { uri: string } }).resource.uri, `portico://reclaim/policies/${erp.id}`);
  t.regex((prompt.messages[1].content as { text: string }).text, /"outcome": "recoverable"/);
  t.regex((prompt.messages[2].content as { text: string }).text, /Write a recovery runbook for restoring virtual_machine "erp-app-01, erp-app-02"/);

  const tooOld = await client.getPrompt({ name: 'reclaim.plan_recovery', arguments: { policy_id: erp.id, point_in_time: at(Date.now() - 30 * DAY) } });
  t.regex((tooOld.messages[2].content as { text: string }).text, /is not possible under policy "ERP virtual machines"/);
  await t.throwsAsync(client.getPrompt({ name: 'reclaim.plan_recovery', arguments: { policy_id: erp.id, point_in_time: 'yesterday' } }), { message: /point_in_time/ });
});
