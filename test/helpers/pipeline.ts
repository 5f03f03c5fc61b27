/**
 * The trust pipeline in process, without HTTP: on a migrated database with the demo dataset,
 * with acme's admin authenticated for forge's chat scope. For tests and measurements of the
 * pipeline itself (test/mcp/cancellation.test.ts, bench/pipeline_cost.ts).
 */
import type { Db } from '../../db/connect.js';
import { seedDemoIfEmpty } from '../../db/demo.js';
import { migrateLatest } from '../../db/migrate.js';
import type { Principal } from '../../db/grant_store.js';
import { Pipeline } from '../../mcp/pipeline.js';
import { PrincipalCache } from '../../mcp/principal_cache.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { defaultSeeders } from '../../mounts.js';
import { buildCatalog } from '../../shared/catalog.js';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/log.js';
import { MetricsRegistry } from '../../shared/metrics.js';
import { issueAccessToken } from './grants.js';

export async function forgePipeline(db: Db, databaseUrl: string, password = 'test-password-1'): Promise<{ pipeline: Pipeline; principal: Principal }> {
  await migrateLatest(db);
  await seedDemoIfEmpty(db, { password, seeders: defaultSeeders() });
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const catalog = buildCatalog(PRODUCTS);
  const pipeline = new Pipeline({
    db, config, catalog, log: createLogger('silent'), metrics: new MetricsRegistry(), isLive: (id) => catalog.isLive(id),
    principals: new PrincipalCache({ maxEntries: 10_000, maxAgeMs: 30_000 }),
  });
  const tenant = await db('tenants').where({ slug: 'acme' }).first();
  const user = await db('users').where({ email: 'admin@acme.example' }).first();
  const { token } = await issueAccessToken(db, { tenantId: tenant.id, userId: user.id, product: 'forge', resource: `${config.mcpUrl}/forge`, scopes: ['forge.chat.read'] });
  return { pipeline, principal: await pipeline.authenticate(token, 'forge') };
}
