/**
 * aegis's data: scans and their findings. A scan reads the tenant's own connections and members
 * through the same TenantScope (tenant_id filter) as every other product query, and never another
 * tenant's rows.
 */
import { AppError } from '../../../shared/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { decodeCursor, INT4_MAX, iso, pageOf, type NewRow, type Page } from '../common.js';
import { runChecks, SEVERITIES, SEVERITY_RANK, type ConnectionSnapshot, type MemberSnapshot, type Severity } from './checks.js';

export const FINDING_STATUSES = ['open', 'resolved'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];

export interface DbScanRow {
  id: string;
  tenant_id: string;
  status: 'completed';
  checks_run: number;
  subjects_examined: number;
  started_by: string | null;
  started_at: number;
  completed_at: number;
}

export interface DbFindingRow {
  id: string;
  tenant_id: string;
  scan_id: string;
  check_name: string;
  severity: Severity;
  severity_rank: number;
  status: FindingStatus;
  title: string;
  detail: string;
  recommendation: string;
  subject_kind: string;
  subject_id: string;
  subject_label: string | null;
  created_at: number;
  resolved_at: number | null;
  resolved_by: string | null;
  resolution_note: string | null;
}

export type SeverityCounts = Record<Severity, number>;

function findingView(row: DbFindingRow) {
  return {
    id: row.id,
    scan_id: row.scan_id,
    check: row.check_name,
    severity: row.severity,
    status: row.status,
    title: row.title,
    detail: row.detail,
    recommendation: row.recommendation,
    subject: { kind: row.subject_kind, id: row.subject_id, label: row.subject_label },
    created_at: iso(row.created_at),
    resolved_at: iso(row.resolved_at),
    resolved_by: row.resolved_by,
    resolution_note: row.resolution_note,
  };
}

export type FindingView = ReturnType<typeof findingView>;

function scanView(row: DbScanRow, open: SeverityCounts, resolved: number) {
  const openTotal = Object.values(open).reduce((a, b) => a + b, 0);
  return {
    id: row.id,
    status: row.status,
    checks_run: row.checks_run,
    subjects_examined: row.subjects_examined,
    findings_total: openTotal + resolved,
    open_findings: open,
    resolved_findings: resolved,
    started_by: row.started_by,
    started_at: iso(row.started_at),
    completed_at: iso(row.completed_at),
  };
}

export type ScanView = ReturnType<typeof scanView>;

const zeroCounts = (): SeverityCounts => Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as SeverityCounts;

export function aegisRepository(scope: TenantScope) {
  async function countsOf(scanIds: string[]): Promise<Map<string, { open: SeverityCounts; resolved: number }>> {
    const result = new Map(scanIds.map((id) => [id, { open: zeroCounts(), resolved: 0 }]));
    if (!scanIds.length) return result;
    const rows: Array<{ scan_id: string; severity: Severity; status: FindingStatus; n: number | string }> = await scope
      .from('aegis_findings')
      .whereIn('scan_id', scanIds)
      .groupBy('scan_id', 'severity', 'status')
      .select('scan_id', 'severity', 'status')
      .count({ n: '*' });
    for (const row of rows) {
      const entry = result.get(row.scan_id)!;
      if (row.status === 'open') entry.open[row.severity] += Number(row.n);
      else entry.resolved += Number(row.n);
    }
    return result;
  }

  async function withCounts(rows: DbScanRow[]): Promise<ScanView[]> {
    const counts = await countsOf(rows.map((r) => r.id));
    return rows.map((row) => scanView(row, counts.get(row.id)!.open, counts.get(row.id)!.resolved));
  }

  async function latestScan(): Promise<DbScanRow | undefined> {
    return scope.from<DbScanRow>('aegis_scans').orderBy([{ column: 'started_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first();
  }

  /**
   * The scan a listing without scan_id was paging: that of the cursor's last finding, so a scan
   * started between two pages does not switch the listing to it half-way (the latest scan when the
   * finding is gone with its scan).
   */
  async function scanOfCursor(cursor: string): Promise<DbScanRow | undefined> {
    const { id } = decodeCursor(cursor, INT4_MAX);
    const finding = await scope.from<DbFindingRow>('aegis_findings').where('aegis_findings.id', id).first('scan_id');
    return finding ? scope.from<DbScanRow>('aegis_scans').where('aegis_scans.id', finding.scan_id).first() : latestScan();
  }

  /** The tenant's connections and members, as the checks see them. */
  async function snapshot(): Promise<{ connections: ConnectionSnapshot[]; members: MemberSnapshot[] }> {
    const connections: ConnectionSnapshot[] = await scope
      .from('connections')
      .select('id', 'user_id', 'client_id', 'client_name', 'client_kind', 'product', 'scopes', 'created_at', 'last_used_at', 'revoked_at');
    const members: Array<Omit<MemberSnapshot, 'disabled'> & { disabled_at: number | string | null }> = await scope
      .from('memberships')
      .join('users', 'users.id', 'memberships.user_id')
      .select('memberships.user_id', 'users.email', 'memberships.role', 'memberships.created_at as joined_at', 'users.last_login_at', 'users.disabled_at');
    const num = (v: number | string | null) => (v === null ? null : Number(v));
    return {
      connections: connections.map((c) => ({ ...c, created_at: Number(c.created_at), last_used_at: num(c.last_used_at), revoked_at: num(c.revoked_at) })),
      members: members.map(({ disabled_at, ...m }) => ({ ...m, joined_at: Number(m.joined_at), last_login_at: num(m.last_login_at), disabled: disabled_at !== null })),
    };
  }

  const scans = {
    async list(args: { limit?: number; cursor?: string }): Promise<Page<ScanView>> {
      const page = await pageOf<DbScanRow>(scope.from('aegis_scans'), 'aegis_scans', args, 'started_at');
      return { items: await withCounts(page.items), next_cursor: page.next_cursor };
    },

    async get(rawId: string): Promise<ScanView> {
      const row = await scope.require<DbScanRow>('aegis_scans', rawId, 'scan');
      return (await withCounts([row]))[0];
    },

    /** Runs every check now over the tenant's data and stores the scan with its findings. */
    async run(startedBy: string | null): Promise<ScanView & { findings: FindingView[] }> {
      const now = Date.now();
      const result = runChecks({ ...(await snapshot()), now });
      const scan = (await scope.insert<NewRow<DbScanRow>>('aegis_scans', {
        status: 'completed', checks_run: result.checks_run, subjects_examined: result.subjects_examined,
        started_by: startedBy, started_at: now, completed_at: Date.now(),
      })) as DbScanRow;
      const findings: DbFindingRow[] = [];
      for (const draft of result.findings) {
        findings.push((await scope.insert<NewRow<DbFindingRow>>('aegis_findings', {
          scan_id: scan.id, check_name: draft.check, severity: draft.severity, title: draft.title, detail: draft.detail,
          recommendation: draft.recommendation, subject_kind: draft.subject_kind, subject_id: draft.subject_id, subject_label: draft.subject_label,
          severity_rank: SEVERITY_RANK[draft.severity], status: 'open', created_at: now,
          resolved_at: null, resolved_by: null, resolution_note: null,
        })) as DbFindingRow);
      }
      const open = zeroCounts();
      for (const f of findings) open[f.severity] += 1;
      return { ...scanView(scan, open, 0), findings: findings.map(findingView) };
    },

    async delete(rawId: string) {
      const row = await scope.require<DbScanRow>('aegis_scans', rawId, 'scan');
      const findings = await scope.from('aegis_findings').where('scan_id', row.id).delete();
      // Deleted by a call that ran at the same time: this one deleted nothing, as it would a moment later.
      if (!(await scope.delete('aegis_scans', row.id))) throw new AppError('not_found', `no scan with id ${row.id}`);
      return { deleted: true, id: row.id, started_at: iso(row.started_at), findings_deleted: findings };
    },

    latest: latestScan,
  };

  const findings = {
    /** Findings of one scan (default: the latest), most severe first. */
    async list(filter: { scan_id?: string; severity?: Severity; status?: FindingStatus; limit?: number; cursor?: string }): Promise<Page<FindingView> & { scan_id: string | null }> {
      const scan = filter.scan_id ? await scope.require<DbScanRow>('aegis_scans', filter.scan_id, 'scan')
        : filter.cursor ? await scanOfCursor(filter.cursor) : await latestScan();
      if (!scan) return { scan_id: null, items: [], next_cursor: null };
      const query = scope.from('aegis_findings').where('scan_id', scan.id);
      if (filter.severity) query.where('severity', filter.severity);
      if (filter.status) query.where('status', filter.status);
      const page = await pageOf<DbFindingRow>(query, 'aegis_findings', filter, 'severity_rank', INT4_MAX);
      return { scan_id: scan.id, items: page.items.map(findingView), next_cursor: page.next_cursor };
    },

    /** Every finding of a scan (up to `max`), most severe first: for the scan resource and the triage prompt. */
    async ofScan(scanId: string, filter: { status?: FindingStatus } = {}, max = 500): Promise<{ findings: FindingView[]; truncated: boolean }> {
      const query = scope.from<DbFindingRow>('aegis_findings').where('scan_id', scanId);
      if (filter.status) query.where('status', filter.status);
      const rows = await query.orderBy([{ column: 'severity_rank', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(max + 1);
      return { findings: rows.slice(0, max).map(findingView), truncated: rows.length > max };
    },

    async get(rawId: string): Promise<FindingView> {
      return findingView(await scope.require<DbFindingRow>('aegis_findings', rawId, 'finding'));
    },

    /** Resolving twice changes nothing: the first resolution (who, when, note) is kept. */
    async resolve(rawId: string, by: string, note: string | null): Promise<FindingView & { already_resolved: boolean }> {
      // Locked first and read as it is now: a resolution committed while this call waited is the
      // first, and is kept; a finding deleted with its scan meanwhile is not_found.
      const row = await scope.requireLocked<DbFindingRow>('aegis_findings', rawId, 'finding');
      if (row.status === 'resolved') return { ...findingView(row), already_resolved: true };
      const patch = { status: 'resolved' as const, resolved_at: Date.now(), resolved_by: by, resolution_note: note };
      await scope.update('aegis_findings', row.id, patch);
      return { ...findingView({ ...row, ...patch }), already_resolved: false };
    },
  };

  return { scans, findings };
}

export type AegisRepository = ReturnType<typeof aegisRepository>;
