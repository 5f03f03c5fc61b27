import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, pageArgs } from '../../common.js';
import { tagArg } from '../args.js';
import { CONFIDENCES, type HarvestRepository } from '../repository.js';

export default defineTool({
  name: 'harvest.list_reports',
  title: 'List intelligence reports',
  description:
    'Lists the intelligence reports of your organization, newest first, with subject, source, summary, confidence, tags and when the ' +
    'information was observed. Optional filters: tag (exact, case-insensitive), source (substring), confidence. For text search use ' +
    'harvest.search_intel. Returns { reports, next_cursor }. Read-only.',
  scope: 'harvest.intel.read',
  destructive: false,
  input: {
    tag: tagArg.optional().describe('Only reports carrying this tag.'),
    source: nameArg(200).optional().describe('Only reports whose source contains this text (case-insensitive).'),
    confidence: z.enum(CONFIDENCES).optional().describe('Only reports of this confidence.'),
    ...pageArgs,
  },
  async handler(args, { repos }: ToolContext<HarvestRepository>) {
    const page = await repos.reports.list(args);
    return { reports: page.items, next_cursor: page.next_cursor };
  },
});
