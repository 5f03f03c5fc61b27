import type { ToolContext } from '../../../shared/catalog.js';
import { granted } from '../common.js';
import type { PeopleRepository } from './repository.js';

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
  shown.profile_omitted = 'reading the profile needs the scope people.profiles.read';
  return shown;
}
