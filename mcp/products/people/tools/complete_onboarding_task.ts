import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { LIFECYCLE_PARTS, personAsGranted } from '../granted.js';
import type { PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.complete_onboarding_task',
  title: 'Complete an onboarding task',
  description:
    "Marks one open task of a person's onboarding checklist as done, recording who and when. When it was the last open task, the person's status becomes active " +
    "and onboarding_completed is recorded. Returns the person's status, dates and checklist, with their profile only for connections that may read profiles " +
    '(people.profiles.read). Refuses (conflict) a task that is already done or cancelled.',
  scope: 'people.lifecycle.write',
  destructive: false,
  input: { task_id: z.string().min(1).max(200).describe('Id of the onboarding task (from people.get_person).') },
  handler: async ({ task_id }, context: ToolContext<PeopleRepository>) => {
    const record = await context.repos.lifecycle.completeTask(task_id, context.user.id);
    return { ...personAsGranted(context, record, LIFECYCLE_PARTS), uri: context.resourceUri('profiles', record.id) };
  },
});
