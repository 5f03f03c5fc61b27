import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg } from '../../common.js';
import { LIFECYCLE_PARTS, personAsGranted } from '../granted.js';
import { DEFAULT_CHECKLIST, TASK_OWNERS, type PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.start_onboarding',
  title: 'Start onboarding',
  description:
    'Starts onboarding for a person in pre_hire: their status becomes onboarding, the start date is set, and an onboarding checklist is created with due dates relative to the start date ' +
    `(by default ${DEFAULT_CHECKLIST.length} tasks: contract, accounts, equipment, welcome meeting, security training, 30-day check-in; or the tasks given). ` +
    'When every task is completed (people.complete_onboarding_task) the person becomes active. Records onboarding_started in their history and returns the person\'s status, dates and checklist, ' +
    'with their profile only for connections that may read profiles (people.profiles.read). ' +
    'Refuses (conflict) anyone not in pre_hire. Creates no accounts and sends nothing.',
  scope: 'people.lifecycle.write',
  destructive: false,
  input: {
    person_id: z.string().min(1).max(200).describe('Id of the person to onboard.'),
    start_date: dateArg.optional().describe("First working day, YYYY-MM-DD; defaults to the profile's start date (one of the two is needed)."),
    tasks: z
      .array(z.strictObject({
        title: nameArg(200).describe('What must be done.'),
        owner: z.enum(TASK_OWNERS).describe('Who does it: hr, it, manager or person.'),
        due_in_days: z.number().int().min(-365).max(365).optional().describe('Due this many days after the start date (negative: before).'),
      }))
      .min(1)
      .max(30)
      .optional()
      .describe('A checklist instead of the default one.'),
  },
  handler: async ({ person_id, start_date, tasks }, context: ToolContext<PeopleRepository>) => {
    const record = await context.repos.lifecycle.startOnboarding(person_id, { start_date: start_date === undefined ? undefined : dateToMs(start_date), tasks }, context.user.id);
    return { ...personAsGranted(context, record, LIFECYCLE_PARTS), uri: context.resourceUri('profiles', record.id) };
  },
});
