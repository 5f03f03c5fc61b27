import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.complete_onboarding_task',
  title: 'Complete an onboarding task',
  description:
    "Marks one open task of a person's onboarding checklist as done, recording who and when. When it was the last open task, the person's status becomes active " +
    "and onboarding_completed is recorded. Returns the person's profile with the checklist. Refuses (conflict) a task that is already done or cancelled.",
  scope: 'people.lifecycle.write',
  destructive: false,
  input: { task_id: z.string().min(1).max(200).describe('Id of the onboarding task (from people.get_person).') },
  handler: async ({ task_id }, { repos, user, resourceUri }: ToolContext<PeopleRepository>) => {
    const record = await repos.lifecycle.completeTask(task_id, user.id);
    return { ...record, uri: resourceUri('profiles', record.id) };
  },
});
