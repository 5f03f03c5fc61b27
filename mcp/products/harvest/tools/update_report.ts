import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { reportFields } from '../args.js';
import type { HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.update_report',
  title: 'Update an intelligence report',
  description:
    'Changes the given fields of an intelligence report; fields left out stay as they are, and tags, when given, replace the old tags. ' +
    'Needs report_id; returns the report and the list of fields that were given. Keeps no earlier version of the text.',
  scope: 'harvest.intel.write',
  destructive: false,
  idempotent: true,
  input: {
    report_id: z.string().max(100).describe('The report id.'),
    subject: reportFields.subject.optional(),
    source: reportFields.source.optional(),
    summary: reportFields.summary.optional(),
    confidence: reportFields.confidence.optional(),
    tags: reportFields.tags.optional(),
    observed_at: reportFields.observed_at.optional(),
  },
  async handler({ report_id, observed_at, ...patch }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const report = await repos.reports.update(report_id, { ...patch, ...(observed_at ? { observed_at: Date.parse(observed_at) } : {}) });
    return { ...report, uri: resourceUri('reports', report.id) };
  },
});
