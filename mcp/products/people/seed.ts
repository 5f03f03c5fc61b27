/** Demo rows for people: a small organization chart with people at every lifecycle stage. */
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS, msToDate } from '../common.js';
import { peopleRepository } from './repository.js';

interface SamplePerson {
  key: string;
  full_name: string;
  email: string;
  job_title: string;
  department: string;
  location: string;
  manager?: string;
  /** Days from today; negative is in the past. */
  start_in_days: number;
  stage: 'active' | 'pre_hire' | 'onboarding' | 'offboarded';
  tasks_done?: number;
}

const SAMPLES: Record<string, SamplePerson[]> = {
  acme: [
    { key: 'ceo', full_name: 'Wile E. Coyote', email: 'wile@acme.example', job_title: 'Chief Executive Officer', department: 'Leadership', location: 'Phoenix', start_in_days: -3000, stage: 'active' },
    { key: 'eng', full_name: 'Ada Lindqvist', email: 'ada.lindqvist@acme.example', job_title: 'Engineering Manager', department: 'Engineering', location: 'Phoenix', manager: 'ceo', start_in_days: -900, stage: 'active' },
    { key: 'dev1', full_name: 'Ravi Menon', email: 'ravi.menon@acme.example', job_title: 'Backend Engineer', department: 'Engineering', location: 'Remote', manager: 'eng', start_in_days: -400, stage: 'active' },
    { key: 'dev2', full_name: 'Lucía Ortega', email: 'lucia.ortega@acme.example', job_title: 'Frontend Engineer', department: 'Engineering', location: 'Tucson', manager: 'eng', start_in_days: -4, stage: 'onboarding', tasks_done: 3 },
    { key: 'new', full_name: 'Tomás Reyes', email: 'tomas.reyes@acme.example', job_title: 'Site Reliability Engineer', department: 'Engineering', location: 'Phoenix', manager: 'eng', start_in_days: 14, stage: 'pre_hire' },
    { key: 'gone', full_name: 'Hank Barlow', email: 'hank.barlow@acme.example', job_title: 'Sales Representative', department: 'Sales', location: 'Phoenix', manager: 'ceo', start_in_days: -700, stage: 'offboarded' },
  ],
  globex: [
    { key: 'ceo', full_name: 'Hank Scorpio', email: 'hank@globex.example', job_title: 'Chief Executive Officer', department: 'Leadership', location: 'Cypress Creek', start_in_days: -5000, stage: 'active' },
    { key: 'ops', full_name: 'Mei Tanaka', email: 'mei.tanaka@globex.example', job_title: 'Head of Operations', department: 'Operations', location: 'Cypress Creek', manager: 'ceo', start_in_days: -1200, stage: 'active' },
    { key: 'analyst', full_name: 'Omar Haddad', email: 'omar.haddad@globex.example', job_title: 'Operations Analyst', department: 'Operations', location: 'Remote', manager: 'ops', start_in_days: 2, stage: 'onboarding', tasks_done: 1 },
    { key: 'intern', full_name: 'Greta Novak', email: 'greta.novak@globex.example', job_title: 'Research Intern', department: 'Research', location: 'Cypress Creek', manager: 'ceo', start_in_days: 30, stage: 'pre_hire' },
  ],
};

export const seedPeople: DemoSeeder = async (trx, tenant, users) => {
  const repos = peopleRepository(new TenantScope(trx, tenant.id));
  const actor = users[`admin@${tenant.slug}.example`] ?? Object.values(users)[0];
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const ids = new Map<string, string>();
  for (const person of SAMPLES[tenant.slug] ?? []) {
    const start = today + person.start_in_days * DAY_MS;
    const created = await repos.profiles.create({
      full_name: person.full_name, email: person.email, job_title: person.job_title, department: person.department, location: person.location,
      manager_id: person.manager ? ids.get(person.manager) : undefined, start_date: start, status: person.stage === 'pre_hire' || person.stage === 'onboarding' ? 'pre_hire' : 'active',
    }, actor);
    ids.set(person.key, created.id);
    if (person.stage === 'onboarding') {
      const onboarding = await repos.lifecycle.startOnboarding(created.id, {}, actor);
      for (const task of onboarding.onboarding_tasks.slice(0, person.tasks_done ?? 0)) await repos.lifecycle.completeTask(task.id, actor);
    }
    if (person.stage === 'offboarded') {
      await repos.lifecycle.offboard(created.id, { last_day: today - 10 * DAY_MS, reason: `Resigned; last day ${msToDate(today - 10 * DAY_MS)}` }, actor);
    }
  }
};
