import { z } from 'zod';
import { definePrompt, type ToolContext } from '../../../../shared/catalog.js';
import { embeddedResource } from '../../common.js';
import type { PeopleRepository } from '../repository.js';

export default definePrompt({
  name: 'people.plan_onboarding',
  title: "Plan a person's onboarding",
  description:
    "A first-weeks plan for a new hire, built from their profile, manager and onboarding checklist (open tasks with owners and due dates), and a welcome note in the organization's name.",
  // Everything it shows is the person's profile (which carries the checklist): get_person's scope.
  scope: 'people.profiles.read',
  args: { person_id: z.string().min(1).max(200).describe('Id of the person being onboarded.') },
  get: async ({ person_id }, { repos, tenant, resourceUri }: ToolContext<PeopleRepository>) => {
    const person = await repos.profiles.get(person_id);
    const open = person.onboarding_tasks.filter((t) => t.status === 'open');
    // Offboarding cancels the open tasks: a checklist with none open is not necessarily done.
    const cancelled = person.onboarding_tasks.filter((t) => t.status === 'cancelled').length;
    const closed = cancelled ? `- no open task: ${person.onboarding_tasks.length - cancelled} done, ${cancelled} cancelled` : '- every task is done';
    const tasks = open.map((t) => `- [${t.owner}] ${t.title}${t.due_date ? ` (due ${t.due_date})` : ''}`).join('\n') ||
      (person.onboarding_tasks.length ? closed : '- onboarding has not started (people.start_onboarding creates the checklist)');
    return [
      {
        role: 'user' as const,
        content: {
          type: 'text' as const,
          text:
            `Plan the first weeks of ${person.full_name} at ${tenant.name}: ${person.job_title ?? 'new colleague'}` +
            `${person.department ? ` in ${person.department}` : ''}, starting ${person.start_date ?? 'on a date not yet set'}` +
            `${person.manager ? `, reporting to ${person.manager.full_name}` : ''}. Status: ${person.status}.\n\n` +
            `Open onboarding tasks:\n${tasks}\n\n` +
            'Write a day-by-day plan for the first week and a week-by-week plan to day 30 that fits these tasks and their owners, ' +
            'point out any task that is overdue or at risk, and end with a short welcome note the manager can send.',
        },
      },
      {
        role: 'user' as const,
        content: embeddedResource(resourceUri('profiles', person.id), person),
      },
    ];
  },
});
