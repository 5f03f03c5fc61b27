import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.get_report',
  title: 'Get an intelligence report',
  description: 'Returns one intelligence report of your organization in full (subject, source, summary, confidence, tags, observed_at). Needs report_id. Read-only.',
  scope: 'harvest.intel.read',
  destructive: false,
  input: {
    report_id: z.string().max(100).describe('The report id.'),
  },
  async handler({ report_id }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const report = await repos.reports.get(report_id);
    return { ...report, uri: resourceUri('reports', report.id) };
  },
});
