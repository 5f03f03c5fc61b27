import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { SEVERITIES } from '../checks.js';
import { FINDING_STATUSES, type AegisRepository } from '../repository.js';

export default defineTool({
  name: 'aegis.list_findings',
  title: 'List findings',
  description:
    'Lists the findings of one scan of your organization, most severe first: check, severity, status, title, detail, recommendation ' +
    'and the subject (connection, user or organization). Without scan_id it lists the latest scan\'s findings. Filters: severity ' +
    '(critical, high, medium, low, info) and status (open, resolved). Returns { scan_id, findings, next_cursor }; scan_id is null when ' +
    'no scan has run yet. Read-only.',
  scope: 'aegis.findings.read',
  destructive: false,
  input: {
    scan_id: z.string().max(100).optional().describe('The scan whose findings to list; default: the latest scan.'),
    severity: z.enum(SEVERITIES).optional().describe('Only findings of this severity.'),
    status: z.enum(FINDING_STATUSES).optional().describe('Only open or only resolved findings.'),
    ...pageArgs,
  },
  async handler(args, { repos }: ToolContext<AegisRepository>) {
    const page = await repos.findings.list(args);
    return { scan_id: page.scan_id, findings: page.items, next_cursor: page.next_cursor };
  },
});
