import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { AegisRepository } from '../repository.js';

export default defineTool({
  name: 'aegis.get_scan',
  title: 'Get a posture scan',
  description:
    'Returns one scan of your organization: when it ran, checks run, subjects examined, open findings by severity and the number ' +
    'resolved. Needs scan_id. The findings themselves come from aegis.list_findings. Read-only.',
  scope: 'aegis.scans.read',
  destructive: false,
  input: {
    scan_id: z.string().max(100).describe('The scan id.'),
  },
  async handler({ scan_id }, { repos, resourceUri }: ToolContext<AegisRepository>) {
    const scan = await repos.scans.get(scan_id);
    return { ...scan, uri: resourceUri('scans', scan.id) };
  },
});
