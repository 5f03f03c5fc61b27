/**
 * The tenant boundary for resources and prompts over the whole catalog (checklist J1), the forms
 * test/products/cross_tenant.test.ts does not reach: every resource template of every live
 * product read with another tenant's id, and every prompt with an `_id` argument aimed at another
 * tenant's record — as stored, upper case, padded, percent-encoded — is refused with HTTP 403
 * forbidden_cross_tenant, returns nothing of the record, and is audited once.
 */
import test from 'ava';
import { z } from 'zod';
import { PRODUCTS } from '../../../mcp/products/index.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { auditOf, grant, openSession, rawCall, startMcpServer, type McpTestServer } from '../../helpers/mcp.js';
import { sample } from '../../helpers/schema_sample.js';

const VARIANTS: Array<[string, (id: string) => string]> = [
  ['as stored', (id) => id],
  ['upper case', (id) => id.toUpperCase()],
  ['padded', (id) => ` ${id} `],
  ['percent-encoded', (id) => id.replace(/-/g, '%2D')],
];

const live = PRODUCTS.filter((p) => p.status === 'live');

function leaks(text: string, row: Record<string, unknown>): string | undefined {
  return Object.entries(row).find(([column, value]) => column !== 'id' && typeof value === 'string' && value.length >= 6 && text.includes(value))?.[0];
}

async function foreignRow(server: McpTestServer, table: string) {
  const row = await server.db(table).where({ tenant_id: server.tenants.globex.id }).first();
  if (!row) throw new Error(`no globex row in ${table}`);
  return row as Record<string, unknown> & { id: string };
}

for (const kind of databasesUnderTest()) {
  test(`every resource template and every prompt id of every live product refuses the other tenant [${kind}]`, async (t) => {
    t.timeout(180_000);
    const server = await startMcpServer(kind);
    try {
      let checked = 0;
      for (const product of live) {
        const { token, connection } = await grant(server, { product: product.id, tenant: 'acme', scopes: Object.keys(product.scopes) });
        const sessionId = await openSession(server, token, product.id);
        for (const resource of product.resources) {
          const table = `${product.id}_${resource.collection}`;
          const foreign = await foreignRow(server, table);
          for (const [variant, form] of VARIANTS) {
            const uri = `${server.config.resourceUriScheme}://${product.id}/${resource.collection}/${form(foreign.id)}`;
            const response = await rawCall(server, token, product.id, 'resources/read', { uri }, { sessionId });
            const label = `${uri} (${variant})`;
            t.is(response.status, 403, `${label}: ${response.text.slice(0, 200)}`);
            t.is(response.body?.error?.data?.code, 'forbidden_cross_tenant', label);
            t.is(leaks(response.text, foreign), undefined, `${label} leaked a column`);
            checked += 1;
          }
          const refusals = await auditOf(server, 'acme', { connection_id: connection.id, name: `${product.id}.${resource.collection}`, outcome: 'forbidden_cross_tenant' });
          t.is(refusals.length, VARIANTS.length, `${product.id}.${resource.collection}: each refusal audited once`);
        }
        for (const prompt of product.prompts) {
          const idArgs = Object.keys(prompt.args).filter((key) => key.endsWith('_id'));
          if (!idArgs.length) continue;
          const base = sample(z.toJSONSchema(z.object(prompt.args)) as Record<string, any>) as Record<string, unknown>;
          for (const key of idArgs) {
            const foreign = await foreignRow(server, product.entities![key.slice(0, -3)]);
            for (const [variant, form] of VARIANTS) {
              const args = Object.fromEntries(Object.entries({ ...base, [key]: form(foreign.id) }).map(([k, v]) => [k, String(v)]));
              const response = await rawCall(server, token, product.id, 'prompts/get', { name: prompt.name, arguments: args }, { sessionId });
              const label = `${prompt.name} ${key} (${variant})`;
              t.is(response.status, 403, `${label}: ${response.text.slice(0, 200)}`);
              t.is(response.body?.error?.data?.code, 'forbidden_cross_tenant', label);
              t.is(leaks(response.text, foreign), undefined, `${label} leaked a column`);
              checked += 1;
            }
          }
          const refusals = await auditOf(server, 'acme', { connection_id: connection.id, name: prompt.name, outcome: 'forbidden_cross_tenant' });
          t.is(refusals.length, idArgs.length * VARIANTS.length, `${prompt.name}: each refusal audited once`);
        }
        t.is((await auditOf(server, 'globex', { connection_id: connection.id })).length, 0, 'nothing lands in the victim’s log');
      }
      t.log(`${checked} foreign references to resources and prompts refused`);
    } finally {
      await server.close();
    }
  });
}
