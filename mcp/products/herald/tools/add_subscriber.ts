import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { SEGMENTS, type HeraldRepository } from '../repository.js';
import { nameArg } from '../../common.js';

export default defineTool({
  name: 'herald.add_subscriber',
  title: 'Add a subscriber',
  description:
    'Adds a person (e-mail, optional name) to one subscriber segment (customers, partners or internal) so that broadcasts to that segment or to everyone count them. ' +
    'Returns the subscriber. Refuses (conflict) an e-mail that is already on the list, and one that unsubscribed: Herald does not add back a person who unsubscribed. Sends nothing to the person.',
  scope: 'herald.broadcasts.write',
  destructive: false,
  input: {
    email: z.email().max(254).describe('E-mail address of the subscriber.'),
    name: nameArg(200).optional().describe('Display name.'),
    segment: z.enum(SEGMENTS).describe('Segment: customers, partners or internal.'),
  },
  handler: (args, { repos }: ToolContext<HeraldRepository>) => repos.subscribers.add(args),
});
