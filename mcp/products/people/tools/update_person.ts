import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg } from '../../common.js';
import { personAsGranted, writtenParts } from '../granted.js';
import type { PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.update_person',
  title: 'Update a person profile',
  description:
    "Changes fields of a person's profile: name, e-mail, job title, department, location, manager (null removes it) or start date; fields left out stay as they are. " +
    'Records a profile_updated event listing each change (from → to) and returns the profile; a connection that may not read profiles (people.profiles.read) ' +
    'gets back only the id and the fields it sent. ' +
    'Does not change the lifecycle status (use start_onboarding or offboard_person); refuses (conflict) an offboarded person, a duplicate e-mail, and a manager that would create a reporting loop.',
  scope: 'people.profiles.write',
  destructive: false,
  idempotent: true,
  input: {
    person_id: z.string().min(1).max(200).describe('Id of the person.'),
    full_name: nameArg(200).optional().describe('New full name.'),
    email: z.email().max(254).optional().describe('New work e-mail.'),
    job_title: nameArg(200).nullable().optional().describe('New job title; null clears it.'),
    department: nameArg(100).nullable().optional().describe('New department; null clears it.'),
    location: nameArg(100).nullable().optional().describe('New location; null clears it.'),
    manager_id: z.string().min(1).max(200).nullable().optional().describe('Id of the new manager; null removes the manager.'),
    start_date: dateArg.optional().describe('New start date, YYYY-MM-DD.'),
  },
  handler: async (args, context: ToolContext<PeopleRepository>) => {
    const { person_id, start_date, ...rest } = args;
    const record = await context.repos.profiles.update(person_id, { ...rest, start_date: start_date === undefined ? undefined : dateToMs(start_date) }, context.user.id);
    return { ...personAsGranted(context, record, writtenParts(args)), uri: context.resourceUri('profiles', record.id) };
  },
});
