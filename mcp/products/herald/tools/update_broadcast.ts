import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, textArg } from '../../common.js';
import { AUDIENCES, type HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.update_broadcast',
  title: 'Edit a broadcast draft',
  description:
    'Changes the title, body or audience of a broadcast that is still a draft; fields left out stay as they are. Returns the updated broadcast. ' +
    'Refuses (conflict) a scheduled broadcast (unschedule it first) and a sent one (sent broadcasts are final).',
  scope: 'herald.broadcasts.write',
  destructive: false,
  idempotent: true,
  input: {
    broadcast_id: z.string().min(1).max(200).describe('Id of the draft broadcast.'),
    title: nameArg(200).optional().describe('New subject line.'),
    body: textArg(20_000).optional().describe('New message, plain text or Markdown.'),
    audience: z.enum(AUDIENCES).optional().describe('New audience.'),
  },
  handler: async ({ broadcast_id, ...patch }, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.broadcasts.update(broadcast_id, patch);
    return { ...record, uri: resourceUri('broadcasts', record.id) };
  },
});
