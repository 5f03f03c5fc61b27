import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineResource({
  collection: 'documents',
  title: 'Trust-center document',
  description: 'One trust-center document with its full text, category, visibility, status and version.',
  scope: 'herald.trust.read',
  mimeType: 'application/json',
  read: async (id, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.documents.get(id);
    return { ...record, uri: resourceUri('documents', record.id) };
  },
});
