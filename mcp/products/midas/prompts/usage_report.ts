import { z } from 'zod';
import { definePrompt, type ToolContext } from '../../../../shared/catalog.js';
import { DAY_MS } from '../../common.js';
import { MAX_USAGE_DAYS, type MidasRepository } from '../repository.js';

/** How many endpoints the report lists, one line each, however many the organization has; its totals cover them all. */
export const ENDPOINTS_LISTED = 50;
/** How many of those places go to the busiest endpoints, whatever else needs listing. */
const BUSIEST_LISTED = 25;
/** An error rate from which an endpoint needs attention. */
const ATTENTION_ERROR_RATE = 0.05;

export default definePrompt({
  name: 'midas.usage_report',
  title: 'Public-API usage report',
  description:
    "A usage report of the organization's public API over the last N days (default 30): totals, the busiest endpoints, error rates and latency, and deprecated endpoints still being called.",
  scope: 'midas.api.read',
  args: {
    days: z.string().regex(/^\d{1,3}$/, 'must be a whole number of days')
      .refine((value) => Number(value) >= 1 && Number(value) <= MAX_USAGE_DAYS, `must be 1-${MAX_USAGE_DAYS} days`)
      .optional().describe(`How many days back, 1-${MAX_USAGE_DAYS} (default 30).`),
  },
  get: async ({ days }, { repos, tenant }: ToolContext<MidasRepository>) => {
    const span = Number(days ?? 30);
    const to = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const usage = await repos.usage.between({ from: to - (span - 1) * DAY_MS, to });
    const deprecated = await repos.endpoints.deprecatedIds();
    type EndpointUsage = (typeof usage.by_endpoint)[number];
    const stillCalled = (e: EndpointUsage) => deprecated.has(e.endpoint_id) && e.calls > 0;
    const failing = (e: EndpointUsage) => e.error_rate >= ATTENTION_ERROR_RATE;
    // The report is asked to name the endpoints that need attention, which are seldom the busiest:
    // after the busiest, they take the places before busier healthy endpoints do, and the next
    // busiest fill what they leave. Those that still do not fit are counted below, not dropped unsaid.
    const beyondBusiest = usage.by_endpoint.slice(BUSIEST_LISTED);
    const chosen = new Set([
      ...usage.by_endpoint.slice(0, BUSIEST_LISTED),
      ...beyondBusiest.filter((e) => stillCalled(e) || failing(e)),
      ...beyondBusiest.filter((e) => !stillCalled(e) && !failing(e)),
    ].slice(0, ENDPOINTS_LISTED));
    const listed = usage.by_endpoint.filter((e) => chosen.has(e)); // busiest first, as by_endpoint is
    const leftOut = usage.by_endpoint.filter((e) => !chosen.has(e));
    const lines = listed
      .map((e) => `- ${e.method} ${e.path}${deprecated.has(e.endpoint_id) ? ' (deprecated)' : ''}: ${e.calls} calls, ${e.errors} errors (${(e.error_rate * 100).toFixed(2)}%), worst daily p95 ${e.worst_p95_ms ?? '?'} ms`);
    if (!lines.length) lines.push('- no calls counted');
    if (leftOut.length) {
      const counted = usage.by_endpoint.length;
      lines.push(`- (only ${listed.length} of the ${counted} endpoints counted are listed: the busiest, then those that need attention, then the next busiest. ` +
        `${leftOut.length} are left out, ${leftOut.filter(stillCalled).length} of them deprecated and still called and ` +
        `${leftOut.filter(failing).length} with an error rate of ${ATTENTION_ERROR_RATE * 100}% or more; the totals above cover all ${counted})`);
    }
    return [
      {
        role: 'user' as const,
        content: {
          type: 'text' as const,
          text:
            `Write a usage report of ${tenant.name}'s public API for ${usage.from} to ${usage.to} (${span} days).\n\n` +
            `Totals: ${usage.totals.calls} calls, ${usage.totals.errors} errors (${(usage.totals.error_rate * 100).toFixed(2)}%).\n\nBy endpoint:\n${lines.join('\n')}\n\n` +
            // One entry a day: at most MAX_USAGE_DAYS, the bound of `days`.
            `Daily calls: ${usage.by_day.map((d) => `${d.day}=${d.calls}`).join(', ')}\n\n` +
            'Summarise the trend, name the endpoints whose error rate or latency needs attention, list deprecated endpoints that still get traffic, and suggest next steps.',
        },
      },
    ];
  },
});
