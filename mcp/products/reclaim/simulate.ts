/**
 * Recovery simulation: which snapshot a policy would restore for a point in time, derived only from
 * the policy's schedule history and retention. Pure arithmetic (no snapshot is enumerated), so a
 * ten-year retention at a five-minute RPO costs the same as a day, and the same inputs always give
 * the same answer. A policy may have any number of segments: the caller passes only those that
 * hold the snapshots the answer names, counts the snapshots in SQL with lastAtOrBefore's
 * arithmetic, and works out the retention window from the policy's retention history
 * (reclaim/repository.ts).
 */
import { DAY_MS, iso } from '../common.js';

export interface ScheduleSegment {
  starts_at: number;
  /** Exclusive; null while the segment is open. */
  ends_at: number | null;
  rpo_minutes: number;
}

type RecoveryOutcome = 'recoverable' | 'out_of_retention' | 'before_first_snapshot' | 'in_the_future';

const MINUTE_MS = 60_000;

/** The last instant at which a segment can have taken a snapshot, evaluated at `asOf`. */
function segmentEnd(segment: ScheduleSegment, asOf: number): number {
  return Math.min(asOf, segment.ends_at === null ? Number.POSITIVE_INFINITY : segment.ends_at - 1);
}

function lastAtOrBefore(segment: ScheduleSegment, t: number, asOf: number): number | undefined {
  const hi = Math.min(t, segmentEnd(segment, asOf));
  if (hi < segment.starts_at) return undefined;
  const period = segment.rpo_minutes * MINUTE_MS;
  return segment.starts_at + Math.floor((hi - segment.starts_at) / period) * period;
}

function firstAtOrAfter(segment: ScheduleSegment, t: number, asOf: number): number | undefined {
  const period = segment.rpo_minutes * MINUTE_MS;
  const lo = Math.max(t, segment.starts_at);
  const at = segment.starts_at + Math.ceil((lo - segment.starts_at) / period) * period;
  return at <= segmentEnd(segment, asOf) ? at : undefined;
}

/** The last snapshot at or before `pointInTime` (and `asOf`) among `segments`, with its segment. */
export function recoveryPointOf(segments: readonly ScheduleSegment[], pointInTime: number, asOf: number): { at: number; segment: ScheduleSegment } | undefined {
  let best: { at: number; segment: ScheduleSegment } | undefined;
  for (const segment of segments) {
    const candidate = lastAtOrBefore(segment, pointInTime, asOf);
    if (candidate !== undefined && (!best || candidate > best.at)) best = { at: candidate, segment };
  }
  return best;
}

export interface RecoverySimulation {
  outcome: RecoveryOutcome;
  point_in_time: string;
  as_of: string;
  /** The snapshot that would be restored (null unless recoverable). */
  recovery_point: string | null;
  /** Data written between the recovery point and point_in_time, which a restore would not bring back. */
  data_loss_minutes: number | null;
  /** Whether that loss is within the RPO in force when the snapshot was taken. */
  rpo_met: boolean | null;
  /** The snapshot that would have served the point, when it has left retention. */
  expired_recovery_point: string | null;
  /** When that snapshot left (or will leave) retention. */
  expires_at: string | null;
  retention: {
    retention_days: number;
    window_start: string;
    retained_snapshots: number;
    earliest_recoverable_point: string | null;
    latest_recoverable_point: string | null;
    expired_snapshots: number;
  };
}

/**
 * `segments`: at least those holding the recovery point, the latest snapshot and the earliest one
 * retained (more change nothing); `snapshots`: how many the whole schedule took at or before
 * `cutoff - 1` and at or before `asOf`. The retention is the caller's, from the policy's retention
 * history: `retentionDays` in force at `asOf`; `cutoff`, the oldest snapshot no retention in force
 * since it was taken has passed; `expiredAt`, when the recovery point left retention, if it has.
 */
export function simulateRecovery(input: {
  segments: readonly ScheduleSegment[];
  snapshots: { beforeCutoff: number; byAsOf: number };
  retentionDays: number;
  cutoff: number;
  expiredAt?: number;
  pointInTime: number;
  asOf: number;
}): RecoverySimulation {
  const { segments, retentionDays, cutoff, pointInTime, asOf } = input;

  const retained = input.snapshots.byAsOf - input.snapshots.beforeCutoff;
  const expired = input.snapshots.beforeCutoff;
  let earliest: number | undefined;
  let latest: number | undefined;
  for (const segment of segments) {
    const first = firstAtOrAfter(segment, cutoff, asOf);
    if (first !== undefined && (earliest === undefined || first < earliest)) earliest = first;
    const last = lastAtOrBefore(segment, asOf, asOf);
    if (last !== undefined && last >= cutoff && (latest === undefined || last > latest)) latest = last;
  }
  const best = recoveryPointOf(segments, pointInTime, asOf);

  const base = {
    point_in_time: iso(pointInTime)!,
    as_of: iso(asOf)!,
    retention: {
      retention_days: retentionDays,
      window_start: iso(cutoff)!,
      retained_snapshots: retained,
      earliest_recoverable_point: iso(earliest),
      latest_recoverable_point: iso(latest),
      expired_snapshots: expired,
    },
  };
  const none = { recovery_point: null, data_loss_minutes: null, rpo_met: null, expired_recovery_point: null, expires_at: null };
  if (pointInTime > asOf) return { outcome: 'in_the_future', ...none, ...base };
  if (!best) return { outcome: 'before_first_snapshot', ...none, ...base };
  if (best.at < cutoff) {
    return { outcome: 'out_of_retention', ...none, expired_recovery_point: iso(best.at), expires_at: iso(input.expiredAt ?? best.at + retentionDays * DAY_MS), ...base };
  }
  // Retained so far: it leaves when the retention in force now has passed, unless that changes.
  const expiresAt = best.at + retentionDays * DAY_MS;
  const lossMinutes = (pointInTime - best.at) / MINUTE_MS;
  return {
    outcome: 'recoverable',
    recovery_point: iso(best.at),
    data_loss_minutes: Math.round(lossMinutes * 1000) / 1000,
    rpo_met: lossMinutes <= best.segment.rpo_minutes,
    expired_recovery_point: null,
    expires_at: iso(expiresAt),
    ...base,
  };
}
