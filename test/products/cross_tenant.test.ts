/**
 * The tenant boundary over the whole catalog (SPEC.md 1.4, DESIGN.md §3): for every tool of every
 * live product, every `<entity>_id` argument aimed at the other tenant's record — as stored, in
 * upper case, padded, percent-encoded — is refused with HTTP 403 forbidden_cross_tenant, returns
 * nothing of that record, changes nothing, and is audited. A new tool is covered automatically.
 */
import test from 'ava';
import { z } from 'zod';
import { PRODUCTS } from '../../mcp/products/index.js';
import { databasesUnderTest } from '../helpers/db.js';
import { startMcpServer, grant, rawCall, auditOf } from '../helpers/mcp.js';
import { sample } from '../helpers/schema_sample.js';

const VARIANTS: Array<[string, (id: string) => string]> = [
  ['as stored', (id) => id],
  ['upper case', (id) => id.toUpperCase()],
  ['padded', (id) => `  ${id} `],
  ['percent-encoded', (id) => id.replace(/-/g, '%2D')],
];

const liveProducts = PRODUCTS.filter((p) => p.status === 'live');

for (const kind of databasesUnderTest()) {
  for (const product of liveProducts) {
    const toolsWithIds = product.tools.filter((tool) => Object.keys(tool.input).some((key) => key.endsWith('_id')));
    if (!toolsWithIds.length) continue;
    test(`every id argument of ${product.id} refuses the other tenant's records [${kind}]`, async (t) => {
      t.timeout(120_000);
      const server = await startMcpServer(kind);
      try {
        const { token } = await grant(server, { product: product.id, tenant: 'acme', scopes: Object.keys(product.scopes) });
        let checked = 0;
        for (const tool of toolsWithIds) {
          const schema = z.toJSONSchema(z.object(tool.input)) as Record<string, any>;
          const idArgs = Object.keys(tool.input).filter((key) => key.endsWith('_id'));
          // Every other id argument points at a record of the caller's own tenant, so only the one under test is foreign.
          const own: Record<string, string> = {};
          for (const key of idArgs) {
            const table = product.entities?.[key.slice(0, -3)];
            t.truthy(table, `${tool.name}: ${key} has no entities entry`);
            const row = await server.db(table!).where({ tenant_id: server.tenants.acme.id }).first('id');
            t.truthy(row, `${tool.name}: no acme row in ${table} (the demo data must fill it)`);
            own[key] = row.id;
          }
          for (const key of idArgs) {
            const table = product.entities![key.slice(0, -3)];
            const foreign = await server.db(table).where({ tenant_id: server.tenants.globex.id }).first();
            t.truthy(foreign, `${tool.name}: no globex row in ${table} to aim at`);
            for (const [variant, form] of VARIANTS) {
              const args = { ...(sample(schema) as Record<string, unknown>), ...own, [key]: form(foreign.id) };
              const before = await server.db(table).where({ id: foreign.id }).first();
              const audited = (await auditOf(server, 'acme', { name: tool.name, outcome: 'forbidden_cross_tenant' })).length;
              const response = await rawCall(server, token, product.id, 'tools/call', { name: tool.name, arguments: args });
              const label = `${tool.name} ${key} (${variant})`;
              t.is(response.status, 403, `${label}: ${JSON.stringify(response.body).slice(0, 300)}`);
              t.is(response.body?.error?.data?.code, 'forbidden_cross_tenant', label);
              const text = JSON.stringify(response.body);
              for (const [column, value] of Object.entries(foreign)) {
                if (column !== 'id' && typeof value === 'string' && value.length >= 6) t.false(text.includes(value), `${label} leaked ${column}`);
              }
              t.deepEqual(await server.db(table).where({ id: foreign.id }).first(), before, `${label} changed the foreign record`);
              t.is((await auditOf(server, 'acme', { name: tool.name, outcome: 'forbidden_cross_tenant' })).length, audited + 1, `${label} audited once`);
              checked += 1;
            }
          }
        }
        t.log(`${product.id}: ${checked} foreign references refused across ${toolsWithIds.length} tools`);
      } finally {
        await server.close();
      }
    });
  }
}
