import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import { DAY_MS, dateArg, dateToMs } from '../../common.js';
import { MAX_USAGE_DAYS, type MidasRepository } from '../repository.js';

export default defineTool({
  name: 'midas.get_usage',
  title: 'Get public-API usage',
  description:
    "Reports the usage of the organization's public API from its daily counters, for one endpoint or all, over from..to (UTC calendar days, inclusive; default the last 30 days up to today; " +
    `at most ${MAX_USAGE_DAYS} days). Returns totals (calls, errors, error_rate), by_endpoint totals sorted by calls (ties by path, then method) with the worst daily p95 latency, and by_day with every day of the range (zeros where nothing was counted). Read-only.`,
  scope: 'midas.api.read',
  destructive: false,
  input: {
    endpoint_id: z.string().min(1).max(200).optional().describe('Only this endpoint.'),
    from: dateArg.optional().describe('First day, YYYY-MM-DD (default 29 days before to).'),
    to: dateArg.optional().describe('Last day, YYYY-MM-DD (default today, UTC).'),
  },
  handler: ({ endpoint_id, from, to }, { repos }: ToolContext<MidasRepository>) => {
    const last = to ? dateToMs(to)! : Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const first = from ? dateToMs(from)! : last - 29 * DAY_MS;
    // With from alone, to is today: a range it makes too long or reversed is from's doing.
    return repos.usage.between({ from: first, to: last, endpoint_id, field: to === undefined ? 'from' : 'to' });
  },
});
