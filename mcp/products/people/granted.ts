import type { ToolContext } from '../../../shared/catalog.js';
import { granted } from '../common.js';
import type { PeopleRepository } from './repository.js';

/**
 * What a lifecycle tool (people.lifecycle.write) shows of the person it moved: their status, dates
 * and checklist, and what the move changed (tasks cancelled, reports moved, by id).
 */
const LIFECYCLE_PARTS = ['id', 'status', 'start_date', 'end_date', 'onboarding_tasks', 'tasks_cancelled', 'reports_reassigned_to', 'reports_reassigned'];

/**
 * A person as a lifecycle tool shows them to the grant: the profile (name, e-mail, job, department,
 * location, manager, reports) is people.profiles.read's to show (people.get_person), and
 * `profile_omitted` names that scope when the grant lacks it.
 */
export function personAsGranted(context: ToolContext<PeopleRepository>, person: object): Record<string, unknown> {
  if (granted(context, 'people.profiles.read')) return { ...person };
  const shown: Record<string, unknown> = Object.fromEntries(Object.entries(person).filter(([part]) => LIFECYCLE_PARTS.includes(part)));
  shown.profile_omitted = 'reading the profile needs the scope people.profiles.read';
  return shown;
}
