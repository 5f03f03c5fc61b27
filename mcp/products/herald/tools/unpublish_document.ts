import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.unpublish_document',
  title: 'Unpublish a trust-center document',
  description:
    'Takes a published document out of the trust center: it returns to draft, its published_at is cleared, and readers (customers, auditors) can no longer see it. ' +
    'The text is kept; publishing it again makes a new version. Returns the document. Refuses (conflict) a document that is not published.',
  scope: 'herald.trust.write',
  destructive: true,
  confirmation: 'Document {document_id} will be removed from the public trust center and everyone reading it there will lose access until it is published again.',
  input: { document_id: z.string().min(1).max(200).describe('Id of the published document.') },
  check: ({ document_id }, { repos }: ToolContext<HeraldRepository>) => repos.documents.checkUnpublish(document_id),
  handler: async ({ document_id }, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.documents.unpublish(document_id);
    return { ...record, uri: resourceUri('documents', record.id) };
  },
});
