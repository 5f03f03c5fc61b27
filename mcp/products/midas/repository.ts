/**
 * midas's data: the organization's public-API endpoints and their daily usage counters
 * (calls, errors, p95 latency per endpoint per UTC day).
 */
import { AppError } from '../../../shared/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS, iso, msToDate, pageOf, type Page } from '../common.js';

export const ENDPOINT_STATUSES = ['active', 'deprecated'] as const;
export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];
export type Method = (typeof METHODS)[number];

export interface DbEndpointRow {
  id: string;
  tenant_id: string;
  method: Method;
  path: string;
  summary: string | null;
  status: EndpointStatus;
  rate_limit_per_minute: number;
  created_at: number;
  updated_at: number;
}

export interface DbUsageRow {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  day: number;
  calls: number;
  errors: number;
  p95_ms: number | null;
}

const ENDPOINTS = 'midas_endpoints';
const USAGE = 'midas_usage_daily';
/** The longest range get_usage reads at once. */
export const MAX_USAGE_DAYS = 366;

function endpointView(row: DbEndpointRow) {
  return {
    id: row.id, method: row.method, path: row.path, summary: row.summary, status: row.status,
    rate_limit_per_minute: row.rate_limit_per_minute, created_at: iso(row.created_at), updated_at: iso(row.updated_at),
  };
}

export type EndpointView = ReturnType<typeof endpointView>;

function errorRate(calls: number, errors: number): number {
  return calls === 0 ? 0 : Math.round((errors / calls) * 10_000) / 10_000;
}

/** Most calls first; ties by path, then method (an endpoint is one method on one path), so the order never depends on the database. */
function byCallsThenRoute(a: { calls: number; path: string; method: string }, b: { calls: number; path: string; method: string }): number {
  const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return b.calls - a.calls || byText(a.path, b.path) || byText(a.method, b.method);
}

export function midasRepository(scope: TenantScope) {
  const requireEndpoint = (rawId: string) => scope.require<DbEndpointRow>(ENDPOINTS, rawId, 'endpoint');

  return {
    endpoints: {
      async list(filter: { status?: EndpointStatus; method?: Method; limit?: number; cursor?: string }): Promise<Page<EndpointView>> {
        const query = scope.from(ENDPOINTS);
        if (filter.status) query.where(`${ENDPOINTS}.status`, filter.status);
        if (filter.method) query.where(`${ENDPOINTS}.method`, filter.method);
        const page = await pageOf<DbEndpointRow>(query, ENDPOINTS, filter);
        return { items: page.items.map(endpointView), next_cursor: page.next_cursor };
      },

      async get(rawId: string) {
        return endpointView(await requireEndpoint(rawId));
      },

      /** The ids of every deprecated endpoint: a report marks each one that still gets calls, however many there are. */
      async deprecatedIds(): Promise<Set<string>> {
        return new Set(await scope.from(ENDPOINTS).where(`${ENDPOINTS}.status`, 'deprecated').pluck(`${ENDPOINTS}.id`));
      },

      async update(rawId: string, patch: { summary?: string | null; status?: EndpointStatus; rate_limit_per_minute?: number }) {
        const row = await requireEndpoint(rawId);
        const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
        if (Object.keys(changes).length) await scope.update(ENDPOINTS, row.id, { ...changes, updated_at: Date.now() });
        return endpointView((await scope.from<DbEndpointRow>(ENDPOINTS).where(`${ENDPOINTS}.id`, row.id).first())!);
      },
    },

    usage: {
      /** Totals over [from, to] (UTC days, inclusive), per day and per endpoint. */
      /** `field` is the end of the range the caller chose, named when the range is refused (default `to`). */
      async between(filter: { from: number; to: number; endpoint_id?: string; field?: 'from' | 'to' }) {
        const field = filter.field ?? 'to';
        if (filter.to < filter.from) throw new AppError('invalid_arguments', field === 'to' ? 'to: must not be before from' : 'from: must not be after to (today)', { details: { field } });
        const days = Math.round((filter.to - filter.from) / DAY_MS) + 1;
        if (days > MAX_USAGE_DAYS) throw new AppError('invalid_arguments', `${field}: the range may cover at most ${MAX_USAGE_DAYS} days`, { details: { field } });
        const endpoint = filter.endpoint_id ? await requireEndpoint(filter.endpoint_id) : undefined;
        const query = scope.from(USAGE).join(ENDPOINTS, `${ENDPOINTS}.id`, `${USAGE}.endpoint_id`)
          .whereBetween(`${USAGE}.day`, [filter.from, filter.to])
          .select(`${USAGE}.*`, `${ENDPOINTS}.method as method`, `${ENDPOINTS}.path as path`)
          .orderBy([{ column: `${USAGE}.day`, order: 'asc' }, { column: `${ENDPOINTS}.path`, order: 'asc' }]);
        if (endpoint) query.where(`${USAGE}.endpoint_id`, endpoint.id);
        const rows = (await query) as Array<DbUsageRow & { method: Method; path: string }>;

        const perDay = new Map<number, { calls: number; errors: number }>();
        const perEndpoint = new Map<string, { endpoint_id: string; method: Method; path: string; calls: number; errors: number; worst_p95_ms: number | null }>();
        for (const row of rows) {
          const day = perDay.get(row.day) ?? { calls: 0, errors: 0 };
          day.calls += row.calls;
          day.errors += row.errors;
          perDay.set(row.day, day);
          const total = perEndpoint.get(row.endpoint_id) ?? { endpoint_id: row.endpoint_id, method: row.method, path: row.path, calls: 0, errors: 0, worst_p95_ms: null };
          total.calls += row.calls;
          total.errors += row.errors;
          if (row.p95_ms !== null) total.worst_p95_ms = Math.max(total.worst_p95_ms ?? 0, row.p95_ms);
          perEndpoint.set(row.endpoint_id, total);
        }
        const calls = rows.reduce((sum, row) => sum + row.calls, 0);
        const errors = rows.reduce((sum, row) => sum + row.errors, 0);
        // Every day of the range appears, with zeros where nothing was counted.
        const series = Array.from({ length: days }, (_, i) => {
          const day = filter.from + i * DAY_MS;
          const counted = perDay.get(day) ?? { calls: 0, errors: 0 };
          return { day: msToDate(day), calls: counted.calls, errors: counted.errors };
        });
        return {
          from: msToDate(filter.from), to: msToDate(filter.to), endpoint_id: endpoint?.id ?? null,
          totals: { calls, errors, error_rate: errorRate(calls, errors) },
          by_endpoint: [...perEndpoint.values()].sort(byCallsThenRoute).map((e) => ({ ...e, error_rate: errorRate(e.calls, e.errors) })),
          by_day: series,
        };
      },
    },
  };
}

export type MidasRepository = ReturnType<typeof midasRepository>;
