import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { AegisRepository } from '../repository.js';

export default defineTool({
  name: 'aegis.get_finding',
  title: 'Get a finding',
  description:
    'Returns one finding of your organization: its check, severity, status, detail, recommendation, subject and, when resolved, who ' +
    'resolved it, when and why. Needs finding_id. Read-only.',
  scope: 'aegis.findings.read',
  destructive: false,
  input: {
    finding_id: z.string().max(100).describe('The finding id.'),
  },
  async handler({ finding_id }, { repos, resourceUri }: ToolContext<AegisRepository>) {
    const finding = await repos.findings.get(finding_id);
    return { ...finding, uri: resourceUri('findings', finding.id) };
  },
});
