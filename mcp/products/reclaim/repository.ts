/**
 * reclaim's data: recovery policies and their schedule and retention history, through a
 * TenantScope. Both are kept as segments so that a change of RPO, a pause or a change of retention
 * never rewrites the past: a simulation for last month uses the schedule that was in force last
 * month, and a snapshot a retention cut expired stays expired.
 */
import { AppError } from '../../../shared/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { translate } from '../../../db/errors.js';
import { changedFields, DAY_MS, iso, nameKey, pageOf, type NewRow, type Page } from '../common.js';
import { recoveryPointOf, simulateRecovery, type RecoverySimulation, type ScheduleSegment } from './simulate.js';

export const TARGET_KINDS = ['database', 'file_share', 'object_bucket', 'virtual_machine', 'saas_workspace'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];
export const POLICY_STATUSES = ['active', 'paused'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

export interface DbPolicyRow {
  id: string;
  tenant_id: string;
  name: string;
  /** nameKey(name): unique in the tenant, so names are unique whatever their case, spacing or Unicode composition. */
  name_key: string;
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

/** A retention in force from `starts_at` until `ends_at` (exclusive; null: in force now). */
export interface DbRetentionSegmentRow {
  id: string;
  tenant_id: string;
  policy_id: string;
  starts_at: number;
  ends_at: number | null;
  retention_days: number;
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

/** How many schedule segments and retention changes (the newest of each) a policy shows. */
export const SCHEDULE_SHOWN = 100;

export interface Newest<Row> {
  rows: Row[];
  total: number;
  truncated: boolean;
}

function policyView(row: DbPolicyRow, schedule: Newest<DbSegmentRow>, retention: Newest<DbRetentionSegmentRow>) {
  return {
    ...policySummaryView(row),
    schedule: schedule.rows.map((s) => ({ starts_at: iso(s.starts_at), ends_at: iso(s.ends_at), rpo_minutes: Number(s.rpo_minutes) })),
    schedule_total: schedule.total,
    schedule_truncated: schedule.truncated,
    retention_history: retention.rows.map((r) => ({ starts_at: iso(r.starts_at), ends_at: iso(r.ends_at), retention_days: Number(r.retention_days) })),
    retention_history_total: retention.total,
    retention_history_truncated: retention.truncated,
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

const SEGMENTS = 'reclaim_schedule_segments';
const RETENTION = 'reclaim_retention_segments';

function segmentOf(row: DbSegmentRow): DbSegmentRow {
  return { ...row, starts_at: Number(row.starts_at), ends_at: row.ends_at === null ? null : Number(row.ends_at), rpo_minutes: Number(row.rpo_minutes) };
}

/**
 * The snapshots a policy's segments took at or before `t` (ms), summed in SQL: every pause, resume
 * and RPO change adds a segment, so a policy may have any number of them. Per segment it is
 * simulate.ts lastAtOrBefore's arithmetic, floor((min(t, ends_at - 1) - starts_at) / period) + 1;
 * the casts keep SQLite's division an integer one (it binds a JavaScript number as a real).
 */
const LAST_AT_OR_BEFORE = 'case when ends_at is null or ends_at - 1 > cast(? as bigint) then cast(? as bigint) else ends_at - 1 end';
/** A retention segment's last instant in force by `?` (asOf, bound twice) less its retention: its window's start then. */
const RETENTION_PASSED =
  '(case when ends_at is null or ends_at - 1 > cast(? as bigint) then cast(? as bigint) else ends_at - 1 end) - cast(retention_days as bigint) * 86400000';
const SNAPSHOTS_AT_OR_BEFORE =
  `coalesce(sum(case when ${LAST_AT_OR_BEFORE} >= starts_at then (${LAST_AT_OR_BEFORE} - starts_at) / (cast(rpo_minutes as bigint) * 60000) + 1 else 0 end), 0)`;

/**
 * Only a lower retention is a cut. The current one again would change nothing, so it is refused
 * rather than asked about (nobody should confirm a cut that expires nothing); a higher one
 * expires nothing either and is update_policy's.
 */
function refuseNoCut(row: DbPolicyRow, retentionDays: number): void {
  const current = Number(row.retention_days);
  if (retentionDays < current) return;
  const details = { details: { field: 'retention_days', current_retention_days: current } };
  if (retentionDays === current) {
    throw new AppError('invalid_arguments',
      `retention_days: ${retentionDays} is already the policy's retention; a cut must be below it; nothing was changed`, details);
  }
  throw new AppError('invalid_arguments',
    `retention_days: ${retentionDays} is above the current ${current}; raising the retention expires nothing and is made with reclaim.update_policy; nothing was changed`,
    details);
}

export function reclaimRepository(scope: TenantScope) {
  /** The newest SCHEDULE_SHOWN segments of `table`, oldest first, with how many there are. */
  async function newestOf<Row>(table: string, policyId: string): Promise<Newest<Row>> {
    const newest = (await scope.from(table).where('policy_id', policyId)
      .orderBy([{ column: 'starts_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(SCHEDULE_SHOWN + 1)) as Row[];
    const truncated = newest.length > SCHEDULE_SHOWN;
    const rows = newest.slice(0, SCHEDULE_SHOWN).reverse();
    if (!truncated) return { rows, total: rows.length, truncated };
    const counted = (await scope.from(table).where('policy_id', policyId).count({ n: '*' }).first()) as { n: number | string } | undefined;
    return { rows, total: Number(counted?.n ?? 0), truncated };
  }

  async function viewOf(row: DbPolicyRow) {
    return policyView(row, await newestOf<DbSegmentRow>(SEGMENTS, row.id), await newestOf<DbRetentionSegmentRow>(RETENTION, row.id));
  }

  async function snapshotsAtOrBefore(policyId: string, t: number): Promise<number> {
    const row = (await scope.from(SEGMENTS).where('policy_id', policyId).where('starts_at', '<=', t)
      .first(scope.db.raw(`${SNAPSHOTS_AT_OR_BEFORE} as n`, [t, t, t, t]))) as { n: number | string } | undefined;
    return Number(row?.n ?? 0);
  }

  /**
   * The segments that hold what a simulation names: the last one starting at or before
   * `pointInTime` (the recovery point) and at or before `asOf` (the latest snapshot), since
   * segments follow one another and a later one's snapshots are all later; and the first two still
   * running at `cutoff` (the earliest retained snapshot: one starting after the cutoff takes one as
   * it starts). Empty segments (closed as they opened) took no snapshot and are skipped.
   */
  async function segmentsForSimulation(policyId: string, pointInTime: number, asOf: number, cutoff: number): Promise<DbSegmentRow[]> {
    const taking = () => scope.from<DbSegmentRow>(SEGMENTS).where('policy_id', policyId).where((q) => q.whereNull('ends_at').orWhereRaw('ends_at > starts_at'));
    const lastFrom = (t: number) => taking().where('starts_at', '<=', t).orderBy([{ column: 'starts_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first() as Promise<DbSegmentRow | undefined>;
    const running = (await taking().where('starts_at', '<=', asOf).where((q) => q.whereNull('ends_at').orWhere('ends_at', '>', cutoff))
      .orderBy([{ column: 'starts_at', order: 'asc' }, { column: 'id', order: 'asc' }]).limit(2)) as DbSegmentRow[];
    const rows = [await lastFrom(Math.min(pointInTime, asOf)), await lastFrom(asOf), ...running].filter((row): row is DbSegmentRow => row !== undefined);
    return [...new Map(rows.map((row) => [row.id, segmentOf(row)])).values()];
  }

  /**
   * The retention window at `asOf` from the retention history (reclaim_retention_segments): the
   * retention in force then, and the cutoff, before which every snapshot has expired. A snapshot
   * has expired once any retention in force since it was taken has passed: for each retention,
   * the snapshots older than it at the last instant it was in force (by `asOf`), so the cutoff is
   * the latest of those instants less their retention, in SQL (a policy's retention may change any
   * number of times). Empty segments (closed as they opened) were never in force.
   */
  async function retentionAt(row: DbPolicyRow, asOf: number): Promise<{ days: number; cutoff: number }> {
    const inForce = () => scope.from(RETENTION).where('policy_id', row.id).where('starts_at', '<=', asOf)
      .where((q) => q.whereNull('ends_at').orWhereRaw('ends_at > starts_at'));
    const current = (await inForce().orderBy([{ column: 'starts_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first('retention_days')) as { retention_days: number } | undefined;
    const latest = (await inForce().first(scope.db.raw(`max(${RETENTION_PASSED}) as cutoff`, [asOf, asOf]))) as { cutoff: number | string | null } | undefined;
    // Before the policy's first snapshot no retention was in force yet: its own is the one shown.
    const days = Number(current?.retention_days ?? row.retention_days);
    return { days, cutoff: latest?.cutoff == null ? asOf - days * DAY_MS : Number(latest.cutoff) };
  }

  /** When the snapshot taken `at` left retention: in the first retention whose window passed it, once it was in force. */
  async function expiryOf(policyId: string, at: number, asOf: number): Promise<number | undefined> {
    const expiring = (await scope.from(RETENTION).where('policy_id', policyId).where('starts_at', '<=', asOf)
      .where((q) => q.whereNull('ends_at').orWhereRaw('ends_at > starts_at'))
      .whereRaw(`${RETENTION_PASSED} > cast(? as bigint)`, [asOf, asOf, at])
      .orderBy([{ column: 'starts_at', order: 'asc' }, { column: 'id', order: 'asc' }]).first('starts_at', 'retention_days')) as { starts_at: number; retention_days: number } | undefined;
    return expiring && Math.max(Number(expiring.starts_at), at + Number(expiring.retention_days) * DAY_MS);
  }

  async function openRetention(policyId: string, startsAt: number, retentionDays: number): Promise<void> {
    await scope.insert<NewRow<DbRetentionSegmentRow>>(RETENTION, { policy_id: policyId, starts_at: startsAt, ends_at: null, retention_days: retentionDays });
  }

  async function openSegment(policyId: string, startsAt: number, rpoMinutes: number): Promise<void> {
    await scope.insert<NewRow<DbSegmentRow>>(SEGMENTS, { policy_id: policyId, starts_at: startsAt, ends_at: null, rpo_minutes: rpoMinutes });
  }

  async function closeSegment(policyId: string, at: number): Promise<void> {
    await scope.from(SEGMENTS).where('policy_id', policyId).whereNull('ends_at').update({ ends_at: at });
  }

  const conflictName = (name: string) => ({ conflict: `a recovery policy named "${name}" already exists` });

  /**
   * Applies the fields of `patch` that differ from `row` (locked by the caller) at `at`. A new RPO
   * closes the current schedule segment and opens another; pausing closes it; resuming opens one.
   * A new retention closes the current retention segment and opens another: it applies to every
   * snapshot still kept, old and new, as a backup system's would, and what a cut expired stays
   * expired.
   */
  async function change(row: DbPolicyRow, patch: PolicyPatch, at: number): Promise<PolicyView & { changed: string[] }> {
    const changes = changedFields(row, patch);
    const changed = Object.keys(changes);
    if (!changed.length) return { ...(await viewOf(row)), changed };
    const next: DbPolicyRow = { ...row, ...changes, updated_at: at };
    const key = changes.name === undefined ? {} : { name_key: nameKey(changes.name) };
    await translate(() => scope.update('reclaim_policies', row.id, { ...changes, ...key, updated_at: at }), conflictName(next.name));
    const scheduleChanged = changes.status !== undefined || (changes.rpo_minutes !== undefined && next.status === 'active');
    if (scheduleChanged) {
      if (row.status === 'active') await closeSegment(row.id, at);
      if (next.status === 'active') await openSegment(row.id, at, next.rpo_minutes);
    }
    // Kept as history: what a cut expired stays expired when retention is raised again.
    if (changes.retention_days !== undefined) {
      await scope.from(RETENTION).where('policy_id', row.id).whereNull('ends_at').update({ ends_at: at });
      await openRetention(row.id, at, changes.retention_days);
    }
    return { ...(await viewOf(next)), changed };
  }

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
      return viewOf(row);
    },

    /** Protection starts at `startsAt` (default now): the first snapshot is taken then. */
    async create(input: PolicyInput, startsAt = Date.now()): Promise<PolicyView> {
      const at = Date.now();
      const row = (await translate(
        () => scope.insert<NewRow<DbPolicyRow>>('reclaim_policies', {
          name: input.name, name_key: nameKey(input.name), target_kind: input.target_kind, target_name: input.target_name, retention_days: input.retention_days,
          rpo_minutes: input.rpo_minutes, status: 'active', created_by: input.created_by ?? null, created_at: at, updated_at: at,
        }),
        conflictName(input.name),
      )) as DbPolicyRow;
      await openSegment(row.id, startsAt, input.rpo_minutes);
      await openRetention(row.id, startsAt, input.retention_days);
      return viewOf(row);
    },

    /**
     * Changes the given fields at `when` (default now; see change). The retention may only be
     * raised here or given again: a lower one is a cut, made by shortenRetention once confirmed.
     */
    async update(rawId: string, patch: PolicyPatch, when?: number): Promise<PolicyView & { changed: string[] }> {
      // Locked first and read as it is now: changes to one policy run one after another, each from
      // the status, schedule and retention the last one left, and the time is taken once the turn
      // has come. So a raise that committed while this call waited makes its lower value a cut.
      const row = await scope.requireLocked<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      const current = Number(row.retention_days);
      if (patch.retention_days !== undefined && patch.retention_days < current) {
        throw new AppError('invalid_arguments',
          `retention_days: ${patch.retention_days} is below the current ${current}; a cut puts older snapshots out of retention for good, ` +
          'so it is made with reclaim.shorten_retention, which asks for confirmation first; nothing was changed',
          { details: { field: 'retention_days', current_retention_days: current } });
      }
      return change(row, patch, when ?? Date.now());
    },

    /**
     * Lowers the retention and says what the cut expired: the snapshots taken between the
     * retention window's start before it and after it, counted as simulate counts them. The
     * current retention or a higher one is refused (refuseNoCut); raising is update's.
     */
    async shortenRetention(rawId: string, retentionDays: number) {
      const row = await scope.requireLocked<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      refuseNoCut(row, retentionDays);
      const previous = Number(row.retention_days);
      const at = Date.now();
      const before = await retentionAt(row, at);
      const policy = await change(row, { retention_days: retentionDays }, at);
      const after = await retentionAt({ ...row, retention_days: retentionDays }, at);
      const expired = after.cutoff > before.cutoff
        ? (await snapshotsAtOrBefore(row.id, after.cutoff - 1)) - (await snapshotsAtOrBefore(row.id, before.cutoff - 1))
        : 0;
      return { ...policy, previous_retention_days: previous, expired_snapshots: expired, previous_window_start: iso(before.cutoff)!, window_start: iso(after.cutoff)! };
    },

    /** What shortenRetention would refuse, refused without locking or changing anything (before a confirmation is asked for). */
    async checkShortenRetention(rawId: string, retentionDays: number): Promise<void> {
      refuseNoCut(await scope.require<DbPolicyRow>('reclaim_policies', rawId, 'policy'), retentionDays);
    },

    async delete(rawId: string) {
      // The policy first, then its segments: the order update takes them in (the reverse deadlocks).
      const row = await scope.requireLocked<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      const segments = await scope.from(SEGMENTS).where('policy_id', row.id).delete();
      await scope.from(RETENTION).where('policy_id', row.id).delete();
      await scope.delete('reclaim_policies', row.id);
      return { deleted: true, id: row.id, name: row.name, target: `${row.target_kind} ${row.target_name}`, schedule_segments_deleted: segments };
    },

    async simulate(rawId: string, pointInTime: number, asOf: number): Promise<{ policy: ReturnType<typeof policySummaryView>; would_recover: string } & RecoverySimulation> {
      const row = await scope.require<DbPolicyRow>('reclaim_policies', rawId, 'policy');
      if (!Number.isFinite(pointInTime)) throw new AppError('invalid_arguments', 'point_in_time: not a date-time', { details: { field: 'point_in_time' } });
      const retention = await retentionAt(row, asOf);
      const segments = await segmentsForSimulation(row.id, pointInTime, asOf, retention.cutoff);
      const recoveryPoint = recoveryPointOf(segments, pointInTime, asOf)?.at;
      const simulation = simulateRecovery({
        segments,
        snapshots: { beforeCutoff: await snapshotsAtOrBefore(row.id, retention.cutoff - 1), byAsOf: await snapshotsAtOrBefore(row.id, asOf) },
        retentionDays: retention.days,
        cutoff: retention.cutoff,
        expiredAt: recoveryPoint !== undefined && recoveryPoint < retention.cutoff ? await expiryOf(row.id, recoveryPoint, asOf) : undefined,
        pointInTime, asOf,
      });
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
