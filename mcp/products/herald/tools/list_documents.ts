import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { DOCUMENT_CATEGORIES, DOCUMENT_STATUSES, type HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.list_documents',
  title: 'List trust-center documents',
  description:
    "Lists the organization's trust-center documents (policies, certifications, reports, subprocessor lists, FAQs), newest first, optionally by status (draft, published) and category. " +
    'Returns { documents: [{ id, title, category, visibility, body, status, version, published_at, ... }], next_cursor }. Read-only.',
  scope: 'herald.trust.read',
  destructive: false,
  input: {
    status: z.enum(DOCUMENT_STATUSES).optional().describe('Only drafts or only published documents.'),
    category: z.enum(DOCUMENT_CATEGORIES).optional().describe('Only this category.'),
    ...pageArgs,
  },
  handler: async (args, { repos }: ToolContext<HeraldRepository>) => {
    const page = await repos.documents.list(args);
    return { documents: page.items, next_cursor: page.next_cursor };
  },
});
