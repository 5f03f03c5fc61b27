import { defineResource, type ToolContext } from '../../../../shared/catalog.js';
import type { PeopleRepository } from '../repository.js';

export default defineResource({
  collection: 'profiles',
  title: 'Person profile',
  description: "One person's profile with their manager, number of direct reports and onboarding checklist.",
  scope: 'people.profiles.read',
  mimeType: 'application/json',
  read: async (id, { repos, resourceUri }: ToolContext<PeopleRepository>) => {
    const record = await repos.profiles.get(id);
    return { ...record, uri: resourceUri('profiles', record.id) };
  },
});
