/** Demo rows for midas: each tenant's public-API endpoints with 45 days of usage counters. */
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS, type NewRow } from '../common.js';
import type { DbEndpointRow, DbUsageRow, EndpointStatus, Method } from './repository.js';

const SAMPLES: Record<string, Array<[Method, string, string, EndpointStatus, number, number]>> = {
  // method, path, summary, status, rate limit, typical calls a day
  acme: [
    ['GET', '/v1/quotes', 'List quotes', 'active', 600, 1800],
    ['POST', '/v1/quotes', 'Create a quote', 'active', 120, 240],
    ['GET', '/v1/deals/{id}', 'Get a deal', 'active', 600, 950],
    ['DELETE', '/v0/quotes/{id}', 'Delete a quote (old API)', 'deprecated', 30, 12],
  ],
  globex: [
    ['GET', '/v1/shipments', 'List shipments', 'active', 1200, 5200],
    ['POST', '/v1/shipments', 'Book a shipment', 'active', 300, 410],
    ['GET', '/v1/inventory/{sku}', 'Stock level of one item', 'active', 1200, 2600],
  ],
};

export const seedMidas: DemoSeeder = async (trx, tenant) => {
  const scope = new TenantScope(trx, tenant.id);
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  for (const [index, [method, path, summary, status, limit, typical]] of (SAMPLES[tenant.slug] ?? []).entries()) {
    const created = today - 200 * DAY_MS;
    const endpoint = await scope.insert<NewRow<DbEndpointRow>>('midas_endpoints', {
      method, path, summary, status, rate_limit_per_minute: limit, created_at: created, updated_at: created,
    });
    const usage: Array<NewRow<DbUsageRow>> = [];
    for (let back = 44; back >= 0; back--) {
      // A deterministic weekly rhythm (quieter weekends) so the demo looks the same on every start.
      const day = today - back * DAY_MS;
      const weekday = new Date(day).getUTCDay();
      const calls = Math.round(typical * (weekday === 0 || weekday === 6 ? 0.35 : 1) * (1 + ((back * 7 + index * 3) % 11) / 50));
      usage.push({
        endpoint_id: endpoint.id, day, calls, errors: Math.round(calls * (0.002 + ((back + index) % 5) / 1000)), p95_ms: 80 + ((back * 13 + index * 29) % 120),
      });
    }
    await scope.insertAll('midas_usage_daily', usage);
  }
};
