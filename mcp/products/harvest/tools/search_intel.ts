import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HarvestRepository } from '../repository.js';
import { nameArg } from '../../common.js';

export default defineTool({
  name: 'harvest.search_intel',
  title: 'Search intelligence reports',
  description:
    'Searches your organization\'s intelligence reports for the words of query (case-insensitive, up to 8 words) in subject, tags and ' +
    'summary. A report matches when any word occurs; results are ranked by how many words matched, then by score (per word: subject 3, ' +
    'exact tag 4 or part of a tag 2, summary 1; the whole phrase adds 2 in the subject and 1 in the summary), then newest observation. ' +
    'Returns { results } with score and matched_terms on each report. Read-only; searches only reports stored in Portico, not the web.',
  scope: 'harvest.intel.read',
  destructive: false,
  input: {
    query: nameArg(200).describe('Words to look for, e.g. "copper scrap prices".'),
    limit: z.number().int().min(1).max(50).optional().describe('How many results to return (1-50, default 10).'),
  },
  async handler({ query, limit }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const results = await repos.reports.search(query, limit ?? 10);
    return { query, results: results.map((r) => ({ ...r, uri: resourceUri('reports', r.id) })) };
  },
});
