import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, textArg } from '../../common.js';
import { AUDIENCES, type HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.create_broadcast',
  title: 'Create a broadcast draft',
  description:
    'Creates a broadcast in the draft state: a title, a body (plain text or Markdown) and an audience (everyone, or the customers, partners or internal subscriber segment). ' +
    'Returns the new broadcast with its id. It does not schedule or send anything; use herald.schedule_broadcast and then herald.send_broadcast.',
  scope: 'herald.broadcasts.write',
  destructive: false,
  input: {
    title: nameArg(200).describe('Subject line of the broadcast.'),
    body: textArg(20_000).describe('The message, plain text or Markdown, up to 20,000 characters.'),
    audience: z.enum(AUDIENCES).default('everyone').describe('Who it is for: everyone, customers, partners or internal.'),
  },
  handler: async (args, { repos, user, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.broadcasts.create(args, user.id);
    return { ...record, uri: resourceUri('broadcasts', record.id) };
  },
});
