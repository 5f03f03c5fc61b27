import { z } from 'zod';
import { forgeTool, contentOut } from '../wire.js';
import { nameArg } from '../../common.js';

export const CONTENT_KINDS = ['article', 'blog_post', 'email', 'social_post', 'product_description', 'note'] as const;

export default forgeTool({
  name: 'forge.create_content',
  title: 'Save a piece of content',
  description:
    "Saves a piece of written content (article, blog post, e-mail, social post, product description or note) to the organization's content library, " +
    'as a draft unless status is published. Needs kind, title and the body text you wrote. Returns the stored item with its id. ' +
    'It stores the text as given: it does not write, rewrite or publish anything elsewhere.',
  scope: 'forge.content.write',
  destructive: false,
  input: {
    kind: z.enum(CONTENT_KINDS).describe('What kind of content this is.'),
    title: nameArg(200).describe('Title (1-200 characters).'),
    body: z.string().trim().min(1).max(100_000).describe('The text itself (up to 100,000 characters; Markdown is kept as is).'),
    status: z.enum(['draft', 'published']).optional().describe('draft (default) or published.'),
  },
  async handler(args, context) {
    const row = await context.repos.content.create({ kind: args.kind, title: args.title, body: args.body, status: args.status ?? 'draft', created_by: context.user.id });
    return contentOut(row);
  },
});
