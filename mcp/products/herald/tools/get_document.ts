import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.get_document',
  title: 'Get a trust-center document',
  description:
    'Returns one trust-center document by id with its full body, category, visibility (public or nda), status, version (how many times it was published) and published_at. Read-only.',
  scope: 'herald.trust.read',
  destructive: false,
  input: { document_id: z.string().min(1).max(200).describe('Id of the document.') },
  handler: async ({ document_id }, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.documents.get(document_id);
    return { ...record, uri: resourceUri('documents', record.id) };
  },
});
