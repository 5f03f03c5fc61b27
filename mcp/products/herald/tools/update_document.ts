import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, textArg } from '../../common.js';
import { DOCUMENT_CATEGORIES, VISIBILITIES, type HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.update_document',
  title: 'Edit a trust-center document draft',
  description:
    'Changes the title, category, visibility or body of a document that is a draft; fields left out stay as they are. Returns the document. ' +
    'Refuses (conflict) a published document: what readers see changes only through unpublish, edit, publish.',
  scope: 'herald.trust.write',
  destructive: false,
  idempotent: true,
  input: {
    document_id: z.string().min(1).max(200).describe('Id of the draft document.'),
    title: nameArg(200).optional().describe('New title.'),
    category: z.enum(DOCUMENT_CATEGORIES).optional().describe('New category.'),
    visibility: z.enum(VISIBILITIES).optional().describe('New visibility.'),
    body: textArg(100_000).optional().describe('New text.'),
  },
  handler: async ({ document_id, ...patch }, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.documents.update(document_id, patch);
    return { ...record, uri: resourceUri('documents', record.id) };
  },
});
