import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { DUE_SHOWN, type PawvaultRepository } from '../repository.js';

export default defineTool({
  name: 'pawvault.list_due_vaccinations',
  title: 'List vaccinations due',
  description:
    "Lists the household's vaccinations whose next dose is due within within_days days from today (UTC date), and those already overdue unless include_overdue is false, soonest first. " +
    'Only the latest dose of each vaccine per pet counts, so a booster already given clears the earlier due date. ' +
    'Each entry has pet_id, pet_name, vaccine, last_given_on, due_on, days_until_due (negative when overdue) and status (overdue or due_soon). ' +
    `At most the ${DUE_SHOWN} due soonest are listed: due_total counts all of them and due_truncated is true when some are left out. Read-only; sends no reminders.`,
  scope: 'pawvault.health.read',
  destructive: false,
  input: {
    within_days: z.number().int().min(0).max(365).default(30).describe('How far ahead to look, in days (0-365, default 30).'),
    pet_id: z.string().min(1).max(200).optional().describe('Only this pet.'),
    include_overdue: z.boolean().default(true).describe('Also list doses whose due date has passed (default true).'),
  },
  handler: (args, { repos }: ToolContext<PawvaultRepository>) => repos.health.dueVaccinations(args),
});
