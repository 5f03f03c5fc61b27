import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.send_broadcast',
  title: 'Send a broadcast',
  description:
    'Marks a scheduled broadcast as sent now: records sent_at, who sent it, and recipients_count (the active subscribers of its audience at this moment). Returns the sent broadcast. ' +
    'Only a scheduled broadcast can be sent; a draft is refused (schedule it first) and so is a broadcast already sent. ' +
    'A sent broadcast cannot be unsent, edited or sent again. Portico itself delivers no e-mail or message: nothing leaves this server; delivery systems read sent broadcasts from it.',
  scope: 'herald.broadcasts.write',
  destructive: true,
  confirmation: 'Broadcast {broadcast_id} will be marked as sent to every active subscriber of its audience; a sent broadcast cannot be unsent or edited.',
  input: { broadcast_id: z.string().min(1).max(200).describe('Id of the scheduled broadcast.') },
  check: ({ broadcast_id }, { repos }: ToolContext<HeraldRepository>) => repos.broadcasts.checkSend(broadcast_id),
  handler: async ({ broadcast_id }, { repos, user, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.broadcasts.send(broadcast_id, user.id, (audience) => repos.subscribers.countAudience(audience));
    return { ...record, uri: resourceUri('broadcasts', record.id) };
  },
});
