import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import type { AegisRepository } from '../repository.js';

export default defineTool({
  name: 'aegis.list_scans',
  title: 'List posture scans',
  description:
    'Lists the security posture scans of your organization, newest first, each with when it ran, how many checks and subjects it ' +
    'examined, and its open findings counted by severity (critical, high, medium, low, info) plus the number resolved. ' +
    'Returns { scans, next_cursor }. Read-only; does not run a scan (aegis.start_scan does).',
  scope: 'aegis.scans.read',
  destructive: false,
  input: { ...pageArgs },
  async handler(args, { repos }: ToolContext<AegisRepository>) {
    const page = await repos.scans.list(args);
    return { scans: page.items, next_cursor: page.next_cursor };
  },
});
