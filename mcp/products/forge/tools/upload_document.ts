import { z } from 'zod';
import { forgeTool, documentOut } from '../wire.js';
import { nameArg } from '../../common.js';

export default forgeTool({
  name: 'forge.upload_document',
  title: 'Upload a document',
  description:
    "Stores a text document (plain text or Markdown, up to 500,000 characters) in the organization's document store so that it can be analysed and read later. " +
    "The whole request must also fit the server's request size limit, 1 MiB unless its operator set another, which holds about 340,000 characters of Chinese, Japanese or Korean text. " +
    'Needs a title and the text itself; binary files are not accepted. Returns the document id, size in bytes and resource URI, without echoing the text.',
  scope: 'forge.documents.write',
  destructive: false,
  input: {
    title: nameArg(200).describe('Title of the document (1-200 characters).'),
    text: z.string().min(1).max(500_000).describe('The full text of the document (up to 500,000 characters, within the request size limit).'),
    media_type: z.enum(['text/plain', 'text/markdown']).optional().describe('text/plain (default) or text/markdown.'),
  },
  async handler(args, context) {
    const row = await context.repos.documents.create({ title: args.title, mediaType: args.media_type ?? 'text/plain', text: args.text, createdBy: context.user.id });
    return documentOut(row, context);
  },
});
