import type { ToolContext } from '../../../shared/catalog.js';
import { granted } from '../common.js';
import type { PeopleRepository } from './repository.js';

const PROFILE_OMITTED = 'reading the profile needs the scope people.profiles.read';

/**
 * What a lifecycle tool (people.lifecycle.write) shows of the person it moved: their status, dates
 * and checklist, and what the move changed (tasks cancelled, reports moved, by id).
 */
export const LIFECYCLE_PARTS: readonly string[] = ['id', 'status', 'start_date', 'end_date', 'onboarding_tasks', 'tasks_cancelled', 'reports_reassigned_to', 'reports_reassigned'];

/**
 * What a profile write tool (people.profiles.write) shows of the person it wrote: their id and the
 * fields the call sent (`args`, as the tool parsed them), as stored. The caller knows those; the
 * rest of the profile (fields it did not send, the manager's name, the reports) it may not read.
 */
export function writtenParts(args: Record<string, unknown>): string[] {
  return ['id', ...Object.keys(args).filter((field) => args[field] !== undefined && field !== 'person_id')];
}

/**
 * A person as a tool whose scope is not people.profiles.read shows them to the grant: the profile
 * (name, e-mail, job, department, location, manager, reports) is people.profiles.read's to show
 * (people.get_person). A grant without it sees only `parts`, what the tool's own scope covers,
 * and `profile_omitted` names the scope.
 */
export function personAsGranted(context: ToolContext<PeopleRepository>, person: object, parts: readonly string[]): Record<string, unknown> {
  if (granted(context, 'people.profiles.read')) return { ...person };
  const shown: Record<string, unknown> = Object.fromEntries(Object.entries(person).filter(([part]) => parts.includes(part)));
  shown.profile_omitted = PROFILE_OMITTED;
  return shown;
}

type History = Awaited<ReturnType<PeopleRepository['lifecycle']['history']>>;
type HistoryEvent = History['events'][number];

/** Profile fields a history event may record whose values people.profiles.read guards. */
const PROFILE_VALUES: readonly string[] = ['full_name', 'email', 'job_title', 'department', 'location'];

/**
 * A history as people.lifecycle.read shows it to a grant that may not read profiles: the events,
 * their times, actors and lifecycle details (status, dates, tasks, the manager by id, as the
 * lifecycle tools show them) stay; the person's name goes, and so do the values of the profile
 * fields an event records (the job title and department a profile was created with, a change of
 * name, e-mail, job, department or location). Such an event names them in `fields_omitted`.
 */
export function historyAsGranted(context: ToolContext<PeopleRepository>, history: History): History & { profile_omitted?: string } {
  if (granted(context, 'people.profiles.read')) return history;
  const { full_name: _name, ...person } = history.person;
  return { ...history, person: person as History['person'], events: history.events.map(withoutProfileValues), profile_omitted: PROFILE_OMITTED };
}

function withoutProfileValues(event: HistoryEvent): HistoryEvent {
  const detail: Record<string, unknown> = { ...event.detail };
  const changes = detail.changes as Record<string, unknown> | undefined;
  const omitted = Object.keys(changes ?? detail).filter((field) => PROFILE_VALUES.includes(field));
  if (!omitted.length) return event;
  if (changes) detail.changes = Object.fromEntries(Object.entries(changes).filter(([field]) => !omitted.includes(field)));
  else for (const field of omitted) delete detail[field];
  return { ...event, detail: { ...detail, fields_omitted: omitted } };
}
