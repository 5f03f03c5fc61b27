import { z } from 'zod';
import { definePrompt, type ToolContext } from '../../../../shared/catalog.js';
import { DAY_MS } from '../../common.js';
import { MAX_USAGE_DAYS, type MidasRepository } from '../repository.js';

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
    const lines = usage.by_endpoint
      .map((e) => `- ${e.method} ${e.path}${deprecated.has(e.endpoint_id) ? ' (deprecated)' : ''}: ${e.calls} calls, ${e.errors} errors (${(e.error_rate * 100).toFixed(2)}%), worst daily p95 ${e.worst_p95_ms ?? '?'} ms`)
      .join('\n') || '- no calls counted';
    return [
      {
        role: 'user' as const,
        content: {
          type: 'text' as const,
          text:
            `Write a usage report of ${tenant.name}'s public API for ${usage.from} to ${usage.to} (${span} days).\n\n` +
            `Totals: ${usage.totals.calls} calls, ${usage.totals.errors} errors (${(usage.totals.error_rate * 100).toFixed(2)}%).\n\nBy endpoint:\n${lines}\n\n` +
            `Daily calls: ${usage.by_day.map((d) => `${d.day}=${d.calls}`).join(', ')}\n\n` +
            'Summarise the trend, name the endpoints whose error rate or latency needs attention, list deprecated endpoints that still get traffic, and suggest next steps.',
        },
      },
    ];
  },
});
