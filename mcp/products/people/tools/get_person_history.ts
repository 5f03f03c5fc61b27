import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { pageArgs } from '../../common.js';
import { historyAsGranted } from '../granted.js';
import { HISTORY_SHOWN, type PeopleRepository } from '../repository.js';

export default defineTool({
  name: 'people.get_person_history',
  title: "Get a person's history",
  description:
    'Returns the lifecycle events of one person: profile_created, profile_updated (with each change from → to), onboarding_started, ' +
    'onboarding_task_completed, onboarding_completed and offboarded, each with its sequence number, time, the user who did it and details. ' +
    `Pages go back in time: the first page holds the newest events, up to limit (default and at most ${HISTORY_SHOWN}), and each page lists its events oldest first. ` +
    'events_total counts all of them; when older ones exist, events_truncated is true and next_cursor, passed as cursor, returns the page before ' +
    "(next_cursor is null on the oldest page). Refuses (invalid_arguments) a malformed cursor or one from another person's history. " +
    "A connection that may not read profiles (people.profiles.read) gets the events without the person's name and without the values of " +
    'profile fields (name, e-mail, job title, department, location); an event that recorded them names them in fields_omitted. Read-only.',
  scope: 'people.lifecycle.read',
  destructive: false,
  input: {
    person_id: z.string().min(1).max(200).describe('Id of the person.'),
    limit: z.number().int().min(1).max(HISTORY_SHOWN).optional().describe(`How many events to return (1-${HISTORY_SHOWN}, default ${HISTORY_SHOWN}).`),
    cursor: pageArgs.cursor.describe('The next_cursor of the previous page of this person\'s history, to read the events before it.'),
  },
  handler: async ({ person_id, ...page }, context: ToolContext<PeopleRepository>) => historyAsGranted(context, await context.repos.lifecycle.history(person_id, page)),
});
