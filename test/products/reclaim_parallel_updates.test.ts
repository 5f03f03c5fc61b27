/**
 * Changes to one recovery policy at the same time: its schedule history stays one line of
 * segments (an open one exactly while the policy is active, at the policy's RPO, none overlapping),
 * and an update racing the policy's deletion succeeds before it or answers not_found, on every database.
 */
import type { ExecutionContext } from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, mcpTest, type McpTestServer } from '../helpers/mcp.js';
import { call, confirmation, unexpected } from './parallel_support.js';

const SCOPES = ['reclaim.policies.read', 'reclaim.policies.write'];

async function assertSchedule(t: ExecutionContext, server: McpTestServer, policyId: string, label: string): Promise<void> {
  const policy = await server.db('reclaim_policies').where({ id: policyId }).first();
  const segments: Array<{ starts_at: string | number; ends_at: string | number | null; rpo_minutes: number }> = await server.db('reclaim_schedule_segments')
    .where({ policy_id: policyId }).orderBy([{ column: 'starts_at' }, { column: 'id' }]);
  const open = segments.filter((s) => s.ends_at === null);
  t.is(open.length, policy.status === 'active' ? 1 : 0, `${label}: one open segment exactly while ${policy.status === 'active' ? 'active' : 'paused'} (${JSON.stringify(segments)})`);
  if (open.length === 1) t.is(Number(open[0].rpo_minutes), Number(policy.rpo_minutes), `${label}: the open segment has the policy's RPO`);
  for (const [i, segment] of segments.entries()) {
    if (segment.ends_at !== null) t.true(Number(segment.ends_at) >= Number(segment.starts_at), `${label}: segment ${i} ends after it starts`);
    const next = segments[i + 1];
    if (next) t.true(segment.ends_at !== null && Number(next.starts_at) >= Number(segment.ends_at), `${label}: segment ${i + 1} starts after segment ${i} ends (${JSON.stringify(segments)})`);
  }
}

async function createPolicy(t: ExecutionContext, client: Client, name: string): Promise<string> {
  const created = await call(client, 'reclaim.create_policy', { name, target_kind: 'database', target_name: 'orders', retention_days: 30, rpo_minutes: 60 });
  t.true(created.ok, JSON.stringify(created));
  return created.value.id;
}

mcpTest('a policy resumed twice at once, or paused while its RPO changes, keeps one line of schedule segments', async (t, server) => {
  const { client, close } = await connect(server, { product: 'reclaim', tenant: 'acme', scopes: SCOPES });
  try {
    const id = await createPolicy(t, client, 'Parallel schedule');
    for (let round = 0; round < 5; round += 1) {
      t.true((await call(client, 'reclaim.update_policy', { policy_id: id, status: 'paused' })).ok);
      const resumed = await Promise.all([1, 2].map(() => call(client, 'reclaim.update_policy', { policy_id: id, status: 'active' })));
      t.deepEqual(unexpected(resumed, ['conflict']), [], `round ${round}`);
      await assertSchedule(t, server, id, `round ${round}, resumed twice`);

      const [paused, changed] = await Promise.all([
        call(client, 'reclaim.update_policy', { policy_id: id, status: 'paused' }),
        call(client, 'reclaim.update_policy', { policy_id: id, rpo_minutes: 15 + round }),
      ]);
      t.deepEqual(unexpected([paused, changed], ['conflict']), [], `round ${round}`);
      await assertSchedule(t, server, id, `round ${round}, paused while the RPO changed`);
      if ((await server.db('reclaim_policies').where({ id }).first()).status === 'paused') continue;
      t.true((await call(client, 'reclaim.update_policy', { policy_id: id, status: 'paused' })).ok);
    }
  } finally {
    await close();
  }
});

mcpTest('a policy updated while it is deleted is changed before the deletion or answers not_found, leaving no segment behind', async (t, server) => {
  const { client, close } = await connect(server, { product: 'reclaim', tenant: 'acme', scopes: SCOPES });
  try {
    for (let round = 0; round < 6; round += 1) {
      const id = await createPolicy(t, client, `Parallel delete ${round}`);
      const deleteNow = await confirmation(client, 'reclaim.delete_policy', { policy_id: id });
      const [deleted, ...updated] = await Promise.all([
        deleteNow(),
        call(client, 'reclaim.update_policy', { policy_id: id, rpo_minutes: 30 }),
        call(client, 'reclaim.update_policy', { policy_id: id, status: 'paused' }),
      ]);
      t.true(deleted.ok, JSON.stringify(deleted));
      t.deepEqual(unexpected(updated, ['not_found', 'conflict']), [], `round ${round}: every update succeeded or found the policy gone`);
      t.is((await server.db('reclaim_schedule_segments').where({ policy_id: id })).length, 0, 'no segment outlives its policy');
    }
  } finally {
    await close();
  }
});
