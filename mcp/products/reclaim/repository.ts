/**
 * reclaim's data: recovery policies and their schedule history, through a TenantScope. The
 * schedule is kept as segments so that a change of RPO or a pause never rewrites the past: a
 * simulation for last month uses the schedule that was in force last month.
 */
import { AppError } from '../../../shared/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { translate } from '../../../db/errors.js';
import { iso, pageOf, type NewRow, type Page } from '../common.js';
import { simulateRecovery, type RecoverySimulation, type ScheduleSegment } from './simulate.js';

export const TARGET_KINDS = ['database', 'file_share', 'object_bucket', 'virtual_machine', 'saas_workspace'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];
export const POLICY_STATUSES = ['active', 'paused'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

export interface DbPolicyRow {
  id: string;
  tenant_id: string;
  name: string;
  target_kind: TargetKind;
  target_name: string;
  retention_days: number;
  rpo_minutes: number;
  status: PolicyStatus;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface DbSegmentRow extends ScheduleSegment {
  id: string;
  tenant_id: string;
  policy_id: string;
}

export function policySummaryView(row: DbPolicyRow) {
  return {
    id: row.id,
    name: row.name,
    target_kind: row.target_kind,
    target_name: row.target_name,
    retention_days: Number(row.retention_days),
    rpo_minutes: Number(row.rpo_minutes),
    status: row.status,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function policyView(row: DbPolicyRow, segments: DbSegmentRow[]) {
  return {
    ...policySummaryView(row),
    schedule: segments.map((s) => ({ starts_at: iso(s.starts_at), ends_at: iso(s.ends_at), rpo_minutes: Number(s.rpo_minutes) })),
  };
}

export type PolicyView = ReturnType<typeof policyView>;

export interface PolicyInput {
  name: string;
  target_kind: TargetKind;
  target_name: string;
  retention_days: number;
  rpo_minutes: number;
  created_by?: string;
}

export type PolicyPatch = Partial<Pick<PolicyInput, 'name' | 'target_name' | 'retention_days' | 'rpo_minutes'>> & { status?: PolicyStatus };

export function reclaimRepository(scope: TenantScope) {
  async function segmentsOf(policyId: string): Promise<DbSegmentRow[]> {
    const rows = await scope.from<DbSegmentRow>('reclaim_schedule_segments').where('policy_id', policyId).orderBy('starts_at');
    return rows.map((s) => ({ ...s, starts_at: Number(s.starts_at), ends_at: s.ends_at === null ? null : Number(s.ends_at), rpo_minutes: Number(s.rpo_minutes) }));
  }

  async function openSegment(policyId: string, startsAt: number, rpoMinutes: number): Promise<void> {
    await scope.insert<NewRow<DbSegmentRow>>('reclaim_schedule_segments', { policy_id: policyId, starts_at: startsAt, ends_at: null, rpo_minutes: rpoMinutes });
  }

  async function closeSegment(policyId: string, at: number): Promise<void> {
    await scope.from('reclaim_schedule_segments').where('policy_id', policyId).whereNull('ends_at').update({ ends_at: at });
  }

  const conflictName = (name: string) => ({ conflict: `a recovery policy named "${name}" already exists` });

  const policies = {
    async list(filter: { target_kind?: TargetKind; status?: PolicyStatus; limit?: number; cursor?: string }): Promise<Page<ReturnType<typeof policySummaryView>>> {
      const query = scope.from('reclaim_policies');
      if (filter.target_kind) query.where('target_kind', filter.target_kind);
      if (filter.status) query.where('status', filter.status);
      const page = await pageOf<DbPolicyRow>(query, 'reclaim_policies', filter);
      return { items: page.items.map(policySummaryView), next_cursor: page.next_cursor };
    },

    async get(rawId: string): Promise<PolicyView> {
      const row = await scope.require<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      return policyView(row, await segmentsOf(row.id));
    },

    /** Protection starts at `startsAt` (default now): the first snapshot is taken then. */
    async create(input: PolicyInput, startsAt = Date.now()): Promise<PolicyView> {
      const at = Date.now();
      const row = (await translate(
        () => scope.insert<NewRow<DbPolicyRow>>('reclaim_policies', {
          name: input.name, target_kind: input.target_kind, target_name: input.target_name, retention_days: input.retention_days,
          rpo_minutes: input.rpo_minutes, status: 'active', created_by: input.created_by ?? null, created_at: at, updated_at: at,
        }),
        conflictName(input.name),
      )) as DbPolicyRow;
      await openSegment(row.id, startsAt, input.rpo_minutes);
      return policyView(row, await segmentsOf(row.id));
    },

    /**
     * A new RPO closes the current schedule segment and opens another at `at`; pausing closes it;
     * resuming opens one. Retention applies to every snapshot, old and new, as a backup system's would.
     */
    async update(rawId: string, patch: PolicyPatch, when?: number): Promise<PolicyView & { changed: string[] }> {
      // Locked first and read as it is now: changes to one policy run one after another, each from
      // the status and schedule the last one left, and the time is taken once the turn has come.
      const row = await scope.requireLocked<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      const at = when ?? Date.now();
      const changes = Object.fromEntries(Object.entries(patch).filter(([key, value]) => value !== undefined && value !== row[key as keyof DbPolicyRow])) as PolicyPatch;
      const changed = Object.keys(changes);
      if (!changed.length) return { ...policyView(row, await segmentsOf(row.id)), changed };
      const next: DbPolicyRow = { ...row, ...changes, updated_at: at };
      await translate(() => scope.update('reclaim_policies', row.id, { ...changes, updated_at: at }), conflictName(next.name));
      const scheduleChanged = changes.status !== undefined || (changes.rpo_minutes !== undefined && next.status === 'active');
      if (scheduleChanged) {
        if (row.status === 'active') await closeSegment(row.id, at);
        if (next.status === 'active') await openSegment(row.id, at, next.rpo_minutes);
      }
      return { ...policyView(next, await segmentsOf(row.id)), changed };
    },

    async delete(rawId: string) {
      // The policy first, then its segments: the order update takes them in (the reverse deadlocks).
      const row = await scope.requireLocked<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      const segments = await scope.from('reclaim_schedule_segments').where('policy_id', row.id).delete();
      await scope.delete('reclaim_policies', row.id);
      return { deleted: true, id: row.id, name: row.name, target: `${row.target_kind} ${row.target_name}`, schedule_segments_deleted: segments };
    },

    async simulate(rawId: string, pointInTime: number, asOf: number): Promise<{ policy: ReturnType<typeof policySummaryView>; would_recover: string } & RecoverySimulation> {
      const row = await scope.require<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      if (!Number.isFinite(pointInTime)) throw new AppError('invalid_arguments', 'point_in_time: not a date-time', { details: { field: 'point_in_time' } });
      const simulation = simulateRecovery({ segments: await segmentsOf(row.id), retentionDays: Number(row.retention_days), pointInTime, asOf });
      const target = `${row.target_kind.replace('_', ' ')} "${row.target_name}"`;
      const would_recover = {
        recoverable: `${target} as it was at ${simulation.recovery_point}, losing ${simulation.data_loss_minutes} minutes of changes before ${simulation.point_in_time}`,
        out_of_retention: `nothing: the snapshot of ${target} for that time (${simulation.expired_recovery_point}) left retention at ${simulation.expires_at}; the earliest recoverable point is ${simulation.retention.earliest_recoverable_point}`,
        before_first_snapshot: `nothing: ${target} had no snapshot at or before ${simulation.point_in_time}`,
        in_the_future: `nothing: ${simulation.point_in_time} is after ${simulation.as_of}`,
      }[simulation.outcome];
      return { policy: policySummaryView(row), would_recover, ...simulation };
    },
  };

  return { policies };
}

export type ReclaimRepository = ReturnType<typeof reclaimRepository>;
