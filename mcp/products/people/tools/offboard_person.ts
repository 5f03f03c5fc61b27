import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, textArg } from '../../common.js';
import { LIFECYCLE_PARTS, personAsGranted } from '../granted.js';
import type { PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.offboard_person',
  title: 'Offboard a person',
  description:
    "Offboards a person: status becomes offboarded with last_day as end date, open onboarding tasks are cancelled, and their direct reports move to the person's own manager. " +
    'Records an offboarded event (with the reason) in their history and returns the person\'s status, dates and checklist with what was changed, ' +
    'and their profile only for connections that may read profiles (people.profiles.read). ' +
    'There is no tool to undo it: an offboarded profile can no longer be edited. It does not delete the profile or its history, and disables no account outside Portico.',
  scope: 'people.lifecycle.write',
  destructive: true,
  confirmation: 'Person {person_id} will be offboarded with last day {last_day}: the profile is closed, open onboarding tasks are cancelled and direct reports move to their manager.',
  input: {
    person_id: z.string().min(1).max(200).describe('Id of the person leaving.'),
    last_day: dateArg.describe('Last working day, YYYY-MM-DD.'),
    reason: textArg(500).describe('Why they leave (resignation, end of contract, ...).'),
  },
  check: ({ person_id, last_day }, context: ToolContext<PeopleRepository>) => context.repos.lifecycle.checkOffboard(person_id, dateToMs(last_day)!),
  handler: async ({ person_id, last_day, reason }, context: ToolContext<PeopleRepository>) => {
    const record = await context.repos.lifecycle.offboard(person_id, { last_day: dateToMs(last_day)!, reason }, context.user.id);
    return { ...personAsGranted(context, record, LIFECYCLE_PARTS), uri: context.resourceUri('profiles', record.id) };
  },
});
