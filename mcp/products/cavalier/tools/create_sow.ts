import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, nameArg, textArg } from '../../common.js';
import type { CavalierRepository } from '../repository.js';

export default defineTool({
  name: 'cavalier.create_sow',
  title: 'Create a statement of work from a deal',
  description:
    'Creates a draft statement of work for a deal at stage proposal or won (other stages are refused with code conflict), with a scope ' +
    'summary and 1-50 milestones (title, due_date YYYY-MM-DD, amount_minor). It takes the deal\'s currency; the total is the sum of the ' +
    'milestone amounts, computed by the server. A milestone due before today, or before the milestone it follows (they are given in ' +
    'delivery order), is refused (invalid_arguments naming it). Returns the ' +
    'statement of work with its milestones. Does not change the deal\'s stage and does not send anything to the customer.',
  scope: 'cavalier.sows.write',
  destructive: false,
  input: {
    deal_id: z.string().max(100).describe('The deal this statement of work is for.'),
    title: nameArg(200).describe('Title of the statement of work.'),
    scope_summary: textArg(8000).describe('What will be delivered, and what is out of scope.'),
    milestones: z
      .array(z.strictObject({
        title: nameArg(200).describe('What is delivered at this milestone.'),
        due_date: dateArg.describe('Due date, YYYY-MM-DD; today or later.'),
        amount_minor: z.number().int().min(0).max(100_000_000_000).describe('Amount billed at this milestone, in the deal currency\'s minor unit.'),
      }))
      .min(1)
      .max(50)
      .describe('Milestones in delivery order: each due on or after the one before.'),
  },
  async handler(args, { repos, user, resourceUri }: ToolContext<CavalierRepository>) {
    const sow = await repos.sows.create({ ...args, created_by: user.id });
    return { ...sow, uri: resourceUri('sows', sow.id) };
  },
});
