import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { HeraldRepository } from '../repository.js';

export default defineResource({
  collection: 'broadcasts',
  title: 'Broadcast',
  description: 'One broadcast of the organization: title, body, audience, status, schedule and, once sent, when, by whom and to how many subscribers.',
  scope: 'herald.broadcasts.read',
  mimeType: 'application/json',
  read: async (id, { repos, resourceUri }: ToolContext<HeraldRepository>) => {
    const record = await repos.broadcasts.get(id);
    return { ...record, uri: resourceUri('broadcasts', record.id) };
  },
});
