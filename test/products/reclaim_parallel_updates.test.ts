/**
 * Changes to one recovery policy at the same time: its schedule history stays one line of
 * segments (an open one exactly while the policy is active, at the policy's RPO, none overlapping),
 * and an update racing the policy's deletion succeeds before it or answers not_found, on every database.
 * PostgreSQL: a retention is judged against the one stored when the call's turn comes, so a cut
 * never slips through update_policy behind a raise.
 */
import type { ExecutionContext } from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, mcpPostgresTest, mcpTest, type McpTestServer } from '../helpers/mcp.js';
import { call, confirmation, connections, inLine, unexpected } from './parallel_support.js';

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

async function retentionOf(server: McpTestServer, policyId: string): Promise<{ retention_days: number; history: number[] }> {
  const policy = await server.db('reclaim_policies').where({ id: policyId }).first();
  const history = await server.db('reclaim_retention_segments').where({ policy_id: policyId }).orderBy([{ column: 'starts_at' }, { column: 'id' }]);
  return { retention_days: Number(policy.retention_days), history: history.map((r: { retention_days: number }) => Number(r.retention_days)) };
}

mcpPostgresTest('an update that waited behind a raise is a cut of the raised retention: refused, with nothing of it applied', async (t, server) => {
  const [a, b] = await connections(server, { product: 'reclaim', tenant: 'acme', scopes: SCOPES }, 2);
  try {
    const id = await createPolicy(t, a.client, 'Raise then lower');
    const [raised, lowered] = await inLine(t, server.db, 'reclaim_policies', id, [
      () => call(a.client, 'reclaim.update_policy', { policy_id: id, retention_days: 60 }),
      () => call(b.client, 'reclaim.update_policy', { policy_id: id, retention_days: 40, rpo_minutes: 15 }),
    ]);
    t.true(raised.ok, JSON.stringify(raised));
    t.is(lowered.code, 'invalid_arguments', JSON.stringify(lowered));
    t.regex(lowered.value.message, /40 is below the current 60; .*reclaim\.shorten_retention/);
    t.deepEqual(await retentionOf(server, id), { retention_days: 60, history: [30, 60] });
    t.is(Number((await server.db('reclaim_policies').where({ id }).first()).rpo_minutes), 60);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

mcpPostgresTest('a retention cut and a raise lined up on one policy each apply to the retention the other left', async (t, server) => {
  const [a, b] = await connections(server, { product: 'reclaim', tenant: 'acme', scopes: SCOPES }, 2);
  try {
    const id = await createPolicy(t, a.client, 'Cut and raise');
    const [cut, raised] = await inLine(t, server.db, 'reclaim_policies', id, [
      await confirmation(a.client, 'reclaim.shorten_retention', { policy_id: id, retention_days: 7 }),
      () => call(b.client, 'reclaim.update_policy', { policy_id: id, retention_days: 20 }),
    ]);
    t.true(cut.ok && raised.ok, JSON.stringify([cut, raised]));
    t.like(cut.value, { previous_retention_days: 30, retention_days: 7 });
    t.like(raised.value, { retention_days: 20, changed: ['retention_days'] });
    t.deepEqual(await retentionOf(server, id), { retention_days: 20, history: [30, 7, 20] });

    const [raisedAgain, cutAgain] = await inLine(t, server.db, 'reclaim_policies', id, [
      () => call(b.client, 'reclaim.update_policy', { policy_id: id, retention_days: 90 }),
      await confirmation(a.client, 'reclaim.shorten_retention', { policy_id: id, retention_days: 10 }),
    ]);
    t.true(raisedAgain.ok && cutAgain.ok, JSON.stringify([raisedAgain, cutAgain]));
    t.like(cutAgain.value, { previous_retention_days: 90, retention_days: 10 });
    t.deepEqual(await retentionOf(server, id), { retention_days: 10, history: [30, 7, 20, 90, 10] });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
