import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { reportFields } from '../args.js';
import type { HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.create_report',
  title: 'File an intelligence report',
  description:
    'Files an intelligence report: subject, source, summary, confidence (low, medium, high), optional tags (up to 20, stored in lower ' +
    'case) and observed_at (default: now). The report becomes searchable with harvest.search_intel at once. Returns the report. ' +
    'Does not verify the information or contact the source.',
  scope: 'harvest.intel.write',
  destructive: false,
  input: {
    subject: reportFields.subject,
    source: reportFields.source,
    summary: reportFields.summary,
    confidence: reportFields.confidence.default('medium'),
    tags: reportFields.tags.default([]),
    observed_at: reportFields.observed_at.optional(),
  },
  async handler(args, { repos, user, resourceUri }: ToolContext<HarvestRepository>) {
    const report = await repos.reports.create({
      ...args, observed_at: args.observed_at ? Date.parse(args.observed_at) : Date.now(), created_by: user.id,
    });
    return { ...report, uri: resourceUri('reports', report.id) };
  },
});
