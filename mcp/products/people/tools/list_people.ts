import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { nameArg, pageArgs } from '../../common.js';
import { PERSON_STATUSES, type PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.list_people',
  title: 'List people',
  description:
    "Lists the organization's people profiles, newest first, optionally filtered by status (pre_hire, onboarding, active, offboarded), department, manager, " +
    'or a text that the name or e-mail contains. Returns { people: [{ id, full_name, email, job_title, department, location, manager_id, status, start_date, end_date, ... }], next_cursor }. Read-only.',
  scope: 'people.profiles.read',
  destructive: false,
  input: {
    status: z.enum(PERSON_STATUSES).optional().describe('Only people in this lifecycle status.'),
    department: nameArg(100).optional().describe('Only this department (case-insensitive exact match).'),
    manager_id: z.string().min(1).max(200).optional().describe('Only direct reports of this person.'),
    query: nameArg(200).optional().describe('Text the name or e-mail contains (case-insensitive).'),
    ...pageArgs,
  },
  handler: async (args, { repos }: ToolContext<PeopleRepository>) => {
    const page = await repos.profiles.list(args);
    return { people: page.items, next_cursor: page.next_cursor };
  },
});
