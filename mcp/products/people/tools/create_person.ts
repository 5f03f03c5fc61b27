import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { dateArg, dateToMs, nameArg } from '../../common.js';
import { personAsGranted, writtenParts } from '../granted.js';
import type { PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.create_person',
  title: 'Create a person profile',
  description:
    'Creates a person profile: full name and e-mail (unique in the organization), optionally job title, department, location, manager and start date. ' +
    'Status is pre_hire (a new hire, onboard with people.start_onboarding) unless status active is given for someone already working here. ' +
    'Records a profile_created event in their history and returns the profile; a connection that may not read profiles (people.profiles.read) ' +
    'gets back only the id, the fields it sent and the status. Refuses (conflict) an e-mail already in use. Creates no user account and sends no e-mail.',
  scope: 'people.profiles.write',
  destructive: false,
  input: {
    full_name: nameArg(200).describe('Full name.'),
    email: z.email().max(254).describe('Work e-mail address; unique in the organization.'),
    job_title: nameArg(200).optional().describe('Job title.'),
    department: nameArg(100).optional().describe('Department.'),
    location: nameArg(100).optional().describe('Office or city.'),
    manager_id: z.string().min(1).max(200).optional().describe('Id of their manager (a person of the organization).'),
    start_date: dateArg.optional().describe('First working day, YYYY-MM-DD.'),
    status: z.enum(['pre_hire', 'active']).default('pre_hire').describe('pre_hire for a new hire (default), active for someone already working here.'),
  },
  handler: async (args, context: ToolContext<PeopleRepository>) => {
    const { start_date, ...rest } = args;
    const record = await context.repos.profiles.create({ ...rest, start_date: start_date === undefined ? undefined : dateToMs(start_date) }, context.user.id);
    return { ...personAsGranted(context, record, writtenParts(args)), uri: context.resourceUri('profiles', record.id) };
  },
});
