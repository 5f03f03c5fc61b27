/** aegis: security posture scans and findings (SPEC.md part 1.5). */
import { z } from 'zod';
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { AppError } from '../../../shared/errors.js';
import { defineProduct, definePrompt, defineResource, type ToolContext } from '../../../shared/catalog.js';
import { granted } from '../common.js';
import { aegisRepository, type AegisRepository, type ScanView } from './repository.js';
import deleteScan from './tools/delete_scan.js';
import getFinding from './tools/get_finding.js';
import getScan from './tools/get_scan.js';
import listFindings from './tools/list_findings.js';
import listScans from './tools/list_scans.js';
import resolveFinding from './tools/resolve_finding.js';
import startScan from './tools/start_scan.js';

const scanResource = defineResource<AegisRepository>({
  collection: 'scans',
  title: 'Posture scan',
  description: 'A posture scan with its counts and, for connections that may read findings (aegis.findings.read), all of its findings (up to 500), most severe first.',
  scope: 'aegis.scans.read',
  mimeType: 'application/json',
  async read(id, context) {
    const scan = await context.repos.scans.get(id);
    // Which connections and accounts are at risk is aegis.findings.read's to show (aegis.list_findings).
    if (!granted(context, 'aegis.findings.read')) return { ...scan, findings_omitted: 'reading findings needs the scope aegis.findings.read' };
    const { findings, truncated } = await context.repos.findings.ofScan(scan.id);
    return { ...scan, findings, findings_truncated: truncated };
  },
});

const findingResource = defineResource<AegisRepository>({
  collection: 'findings',
  title: 'Finding',
  description: 'One finding of a posture scan: check, severity, status, detail, recommendation and resolution.',
  scope: 'aegis.findings.read',
  mimeType: 'application/json',
  read: (id, { repos }) => repos.findings.get(id),
});

/** How a scan ran (who started it, when it ended, what it checked): aegis.scans.read's to show (aegis.get_scan). */
const SCAN_RUN = ['status', 'checks_run', 'subjects_examined', 'started_by', 'completed_at'] as const;

/**
 * A scan as a findings prompt may show it: its findings and their counts (aegis.findings.read)
 * always; how it ran only with aegis.scans.read, `run_omitted` naming that scope otherwise.
 */
function scanAsGranted(context: ToolContext<AegisRepository>, scan: ScanView): Record<string, unknown> {
  if (granted(context, 'aegis.scans.read')) return scan;
  const shown: Record<string, unknown> = { ...scan };
  for (const part of SCAN_RUN) delete shown[part];
  return { ...shown, run_omitted: 'reading how the scan ran (who started it, checks run, subjects examined) needs the scope aegis.scans.read' };
}

/** The most open findings the triage prompt embeds, the most severe first. */
const TRIAGE_MAX = 200;

const triageFindings = definePrompt({
  name: 'aegis.triage_findings',
  title: 'Triage posture findings',
  description:
    `Embeds the open findings of a scan (default: the latest), at most ${TRIAGE_MAX}, the most severe first (findings_truncated says when more are open; aegis.list_findings pages through all), ` +
    'and asks for a triage: what to fix first and why, who should act, ' +
    'which findings are acceptable risks, and which to resolve with aegis.resolve_finding once fixed. How the scan ran (who started it, checks run, ' +
    'subjects examined) is embedded only for connections that may read scans (aegis.scans.read).',
  scope: 'aegis.findings.read',
  args: {
    scan_id: z.string().max(100).optional().describe('The scan to triage; default: the latest scan.'),
  },
  async get({ scan_id }, context: ToolContext<AegisRepository>) {
    const { repos, resourceUri } = context;
    const scan = scan_id ? await repos.scans.get(scan_id) : await repos.scans.latest().then((row) => row && repos.scans.get(row.id));
    if (!scan) throw new AppError('not_found', 'no scan has run in this organization yet; run aegis.start_scan first');
    const { findings, truncated } = await repos.findings.ofScan(scan.id, { status: 'open' }, TRIAGE_MAX);
    const counts = Object.entries(scan.open_findings).map(([severity, n]) => `${n} ${severity}`).join(', ');
    const text = findings.length === 0
      ? `Scan ${scan.id} (${scan.started_at}) has no open findings. Say so, and suggest when to scan again.`
      : [
        `Triage the ${findings.length}${truncated ? '+' : ''} open findings of posture scan ${scan.id}, run ${scan.started_at} (${counts}).`,
        '1. Group them by what must be done (revoke a connection, remove or add an admin, talk to a person).',
        '2. Order the groups by risk: severity first, then how much access the subject has (write scopes, admin role).',
        '3. For each group say who should act and the concrete step in Portico (console page or admin command).',
        '4. Name findings that look like acceptable risks and explain why.',
        'Do not call aegis.resolve_finding until the person confirms the cause was fixed; quote the finding ids you refer to.',
      ].join('\n');
    return [
      { role: 'user', content: { type: 'resource', resource: { uri: resourceUri('scans', scan.id), mimeType: 'application/json', text: JSON.stringify({ ...scanAsGranted(context, scan), findings, findings_truncated: truncated }, null, 2) } } },
      { role: 'user', content: { type: 'text', text } },
    ];
  },
});

/** A real scan of each demo tenant; in globex its admin-coverage finding is already triaged. */
const seedDemo: DemoSeeder = async (trx, tenant, users) => {
  const repo = aegisRepository(new TenantScope(trx, tenant.id));
  const admin = users[`admin@${tenant.slug}.example`] ?? null;
  const scan = await repo.scans.run(admin);
  if (tenant.slug === 'globex' && admin) {
    const coverage = scan.findings.find((f) => f.check === 'admin_coverage');
    if (coverage) await repo.findings.resolve(coverage.id, admin, 'Accepted for now: a second admin starts next month.');
  }
};

export const aegis = defineProduct<AegisRepository>({
  id: 'aegis',
  title: 'Aegis',
  kind: 'Security posture scans and findings',
  status: 'live',
  // A scan reads every connection and member of the organization: administrators' data (console rule).
  connectableBy: 'admins',
  scopes: {
    'aegis.scans.read': 'See your organization\'s security posture scans and their results',
    'aegis.scans.write': 'Run posture scans of your organization\'s connections and members, and delete scans',
    'aegis.findings.read': 'See the findings of posture scans (which connections and accounts are at risk)',
    'aegis.findings.write': 'Mark findings as resolved, with a note',
  },
  tools: [listScans, getScan, startScan, deleteScan, listFindings, getFinding, resolveFinding],
  resources: [scanResource, findingResource],
  prompts: [triageFindings],
  entities: { scan: 'aegis_scans', finding: 'aegis_findings' },
  seedDemo,
  repositories: (scope) => aegisRepository(scope),
});
