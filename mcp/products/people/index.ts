/** people: profiles and their lifecycle (onboarding, changes, offboarding), with each person's history. */
import { defineProduct } from '../../../shared/catalog.js';
import { peopleRepository, type PeopleRepository } from './repository.js';
import { seedPeople } from './seed.js';
import listPeople from './tools/list_people.js';
import getPerson from './tools/get_person.js';
import createPerson from './tools/create_person.js';
import updatePerson from './tools/update_person.js';
import startOnboarding from './tools/start_onboarding.js';
import completeOnboardingTask from './tools/complete_onboarding_task.js';
import offboardPerson from './tools/offboard_person.js';
import getPersonHistory from './tools/get_person_history.js';
import profilesResource from './resources/profiles.js';
import planOnboarding from './prompts/plan_onboarding.js';

export const people = defineProduct<PeopleRepository>({
  id: 'people',
  title: 'People',
  kind: 'Profiles and lifecycle',
  status: 'live',
  scopes: {
    'people.profiles.read': "See people's profiles: names, e-mails, job titles, departments, managers and status",
    'people.profiles.write': 'Create people profiles and change their details',
    'people.lifecycle.read': "See onboarding checklists and each person's full history",
    'people.lifecycle.write': 'Start onboarding, tick off onboarding tasks and offboard people',
  },
  tools: [listPeople, getPerson, createPerson, updatePerson, startOnboarding, completeOnboardingTask, offboardPerson, getPersonHistory],
  resources: [profilesResource],
  prompts: [planOnboarding],
  entities: { person: 'people_profiles', manager: 'people_profiles', task: 'people_onboarding_tasks' },
  seedDemo: seedPeople,
  repositories: peopleRepository,
});
