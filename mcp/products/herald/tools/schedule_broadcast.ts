import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { instantArg } from '../../common.js';
import type { HeraldRepository } from '../repository.js';

export default defineTool({
  name: 'herald.schedule_broadcast',
  title: 'Schedule a broadcast',
  description:
    'Moves a draft broadcast to scheduled, with the future time it is meant to go out (send_at, ISO 8601 with a time zone). Returns the broadcast. ' +
    'Refuses a broadcast that is not a draft, and a send_at in the past. Scheduling sends nothing: herald.send_broadcast does the sending, and Portico has no timer that sends on its own.',
  scope: 'herald.broadcasts.write',
  destructive: false,
  input: {
    broadcast_id: z.string().min(1).max(200).describe('Id of the draft broadcast.'),
    send_at: instantArg.describe('When it should go out, e.g. 2026-12-01T09:00:00Z; must be in the future.'),
  },
  handler: async ({ broadcast_id, send_at }, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.broadcasts.schedule(broadcast_id, Date.parse(send_at));
    return { ...record, uri: resourceUri('broadcasts', record.id) };
  },
});
