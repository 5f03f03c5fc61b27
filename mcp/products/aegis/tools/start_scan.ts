import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { asGranted } from '../../common.js';
import { CONNECTION_SPRAWL, INACTIVE_ADMIN_DAYS, INACTIVE_MEMBER_DAYS, RECENT_REVOCATION_DAYS, STALE_CONNECTION_DAYS } from '../checks.js';
import type { AegisRepository } from '../repository.js';

export default defineTool({
  name: 'aegis.start_scan',
  title: 'Run a posture scan',
  description:
    'Runs a security posture scan of your organization\'s own Portico set-up now and stores it with its findings. It checks: active ' +
    'connections of people who are no longer members (critical); admin coverage (no admin: critical, a single admin: low); ' +
    'self-registered clients holding write scopes (high); admins without a sign-in for ' + INACTIVE_ADMIN_DAYS + ' days (high); ' +
    'connections unused for ' + STALE_CONNECTION_DAYS + ' days (medium); members with ' + CONNECTION_SPRAWL + ' or more active connections ' +
    '(low); members without a sign-in for ' + INACTIVE_MEMBER_DAYS + ' days (low); connections revoked in the last ' + RECENT_REVOCATION_DAYS +
    ' days (info). Takes no arguments; returns the scan with every finding, most severe first (the findings only for connections that may read them, aegis.findings.read). Reads only your organization\'s data and ' +
    'changes nothing: it does not revoke connections or change roles.',
  scope: 'aegis.scans.write',
  destructive: false,
  input: {},
  async handler(_args, context: ToolContext<AegisRepository>) {
    const { repos, user, resourceUri } = context;
    const scan = await repos.scans.run(user.id);
    // Which connections and accounts are at risk is aegis.findings.read's to show, as for the scan resource.
    return { ...asGranted(context, scan, { findings: 'aegis.findings.read' }), uri: resourceUri('scans', scan.id) };
  },
});
