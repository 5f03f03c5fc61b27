import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.get_broadcast',
  title: 'Get a broadcast',
  description:
    'Returns one broadcast by id: title, body, audience, status, scheduled_for, and once sent its sent_at, sent_by and recipients_count. ' +
    'Also returns how many active subscribers its audience reaches right now (audience_size) and its resource uri. Read-only.',
  scope: 'herald.broadcasts.read',
  destructive: false,
  input: { broadcast_id: z.string().min(1).max(200).describe('Id of the broadcast.') },
  handler: async ({ broadcast_id }, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const broadcast = await repos.broadcasts.get(broadcast_id);
    return { ...broadcast, audience_size: await repos.subscribers.countAudience(broadcast.audience), uri: resourceUri('broadcasts', broadcast.id) };
  },
});
