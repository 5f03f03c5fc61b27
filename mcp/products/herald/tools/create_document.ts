import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, textArg } from '../../common.js';
import { DOCUMENT_CATEGORIES, VISIBILITIES, type HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.create_document',
  title: 'Create a trust-center document draft',
  description:
    'Creates a trust-center document as an unpublished draft: title, category (policy, certification, report, subprocessors, faq), visibility (public, or nda for readers under a non-disclosure agreement) and body. ' +
    'Returns the draft with its id. It is not visible in the trust center until herald.publish_document.',
  scope: 'herald.trust.write',
  destructive: false,
  input: {
    title: nameArg(200).describe('Document title.'),
    category: z.enum(DOCUMENT_CATEGORIES).describe('Kind of document.'),
    visibility: z.enum(VISIBILITIES).default('public').describe('public, or nda (shown only to readers under NDA).'),
    body: textArg(100_000).describe('Document text, plain text or Markdown, up to 100,000 characters.'),
  },
  handler: async (args, { repos, user, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.documents.create(args, user.id);
    return { ...record, uri: resourceUri('documents', record.id) };
  },
});
