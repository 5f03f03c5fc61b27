import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { HISTORY_SHOWN, type PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.get_person_history',
  title: "Get a person's history",
  description:
    'Returns the lifecycle events of one person, oldest first: profile_created, profile_updated (with each change from → to), onboarding_started, ' +
    'onboarding_task_completed, onboarding_completed and offboarded, each with its sequence number, time, the user who did it and details. ' +
    `At most the newest ${HISTORY_SHOWN} events: events_total counts all of them and events_truncated is true when older ones are left out. Read-only.`,
  scope: 'people.lifecycle.read',
  destructive: false,
  input: { person_id: z.string().min(1).max(200).describe('Id of the person.') },
  handler: ({ person_id }, { repos }: ToolContext<PeopleRepository>) => repos.lifecycle.history(person_id),
});
