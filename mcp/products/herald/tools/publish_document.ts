import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.publish_document',
  title: 'Publish a trust-center document',
  description:
    'Publishes a draft document in the trust center: sets status published and published_at, records who published it and increments its version. Returns the document. ' +
    'Refuses (conflict) a document that is already published.',
  scope: 'herald.trust.write',
  destructive: false,
  input: { document_id: z.string().min(1).max(200).describe('Id of the draft document.') },
  handler: async ({ document_id }, { repos, user, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.documents.publish(document_id, user.id);
    return { ...record, uri: resourceUri('documents', record.id) };
  },
});
