import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.get_person',
  title: 'Get a person',
  description:
    "Returns one person's profile: name, e-mail, job title, department, location, status, start and end dates, their manager (id and name), " +
    'how many active direct reports they have, and their onboarding checklist (empty if onboarding never started). Read-only.',
  scope: 'people.profiles.read',
  destructive: false,
  input: { person_id: z.string().min(1).max(200).describe('Id of the person.') },
  handler: async ({ person_id }, { repos, resourceUri }: ToolContext<PeopleRepository>) => {
    const record = await repos.profiles.get(person_id);
    return { ...record, uri: resourceUri('profiles', record.id) };
  },
});
