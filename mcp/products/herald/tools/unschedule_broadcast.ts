import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.unschedule_broadcast',
  title: 'Return a scheduled broadcast to draft',
  description:
    'Moves a scheduled broadcast back to draft and clears its scheduled time, so that it can be edited. Returns the broadcast. ' +
    'Refuses drafts and sent broadcasts: a sent broadcast cannot be recalled.',
  scope: 'herald.broadcasts.write',
  destructive: false,
  input: { broadcast_id: z.string().min(1).max(200).describe('Id of the scheduled broadcast.') },
  handler: async ({ broadcast_id }, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.broadcasts.unschedule(broadcast_id);
    return { ...record, uri: resourceUri('broadcasts', record.id) };
  },
});
