/**
 * The trust contract over the whole catalog, so a new tool is covered the day it is declared:
 * every tool refuses a grant that lacks its scope (HTTP 403 with the scope to step up to), and
 * every destructive tool's first call answers confirmation_required and changes nothing.
 */
import test from 'ava';
import { z } from 'zod';
import { PRODUCTS } from '../../mcp/products/index.js';
import { databasesUnderTest } from '../helpers/db.js';
import { startMcpServer, grant, rawCall, auditOf } from '../helpers/mcp.js';
import { sample } from '../helpers/schema_sample.js';

const live = PRODUCTS.filter((p) => p.status === 'live');

for (const kind of databasesUnderTest()) {
  test(`every tool refuses a grant without its scope, naming the scope [${kind}]`, async (t) => {
    t.timeout(180_000);
    const server = await startMcpServer(kind);
    try {
      let checked = 0;
      for (const product of live) {
        for (const tool of product.tools) {
          const others = Object.keys(product.scopes).filter((scope) => scope !== tool.scope);
          const { token } = await grant(server, { product: product.id, tenant: 'acme', scopes: others });
          const response = await rawCall(server, token, product.id, 'tools/call', { name: tool.name, arguments: {} });
          t.is(response.status, 403, tool.name);
          t.is(response.body?.error?.data?.code, 'insufficient_scope', tool.name);
          t.regex(response.headers.get('www-authenticate') ?? '', new RegExp(`error="insufficient_scope".*scope="${tool.scope.replace(/\./g, '\\.')}"`), tool.name);
          checked += 1;
        }
        const refusals = await auditOf(server, 'acme', { outcome: 'insufficient_scope' });
        t.is(refusals.filter((r) => r.product === product.id).length, product.tools.length, `${product.id}: one audit record per refusal`);
      }
      t.log(`${checked} tools refused without their scope`);
    } finally {
      await server.close();
    }
  });

  test(`every destructive tool asks for confirmation first and changes nothing [${kind}]`, async (t) => {
    t.timeout(180_000);
    const server = await startMcpServer(kind);
    try {
      let checked = 0;
      for (const product of live) {
        const destructive = product.tools.filter((tool) => tool.destructive);
        if (!destructive.length) continue;
        const { token } = await grant(server, { product: product.id, tenant: 'acme', scopes: Object.keys(product.scopes) });
        const tables = [...new Set(Object.values(product.entities ?? {}))];
        const snapshot = async () => Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await server.db(table).orderBy('id')])));
        for (const tool of destructive) {
          const args = sample(z.toJSONSchema(z.object(tool.input)) as Record<string, unknown>) as Record<string, unknown>;
          for (const key of Object.keys(tool.input).filter((k) => k.endsWith('_id'))) {
            const row = await server.db(product.entities![key.slice(0, -3)]).where({ tenant_id: server.tenants.acme.id }).first('id');
            args[key] = row.id;
          }
          const before = await snapshot();
          // `confirmed: true` with no pending confirmation is a first call too (DESIGN.md §6 step 5); it
          // goes first, because a plain first call leaves a pending confirmation that it would consume.
          for (const confirmed of [true, undefined]) {
            const response = await rawCall(server, token, product.id, 'tools/call', { name: tool.name, arguments: confirmed ? { ...args, confirmed } : args });
            t.is(response.status, 200, tool.name);
            const result = response.body?.result;
            t.is(result?.isError, true, `${tool.name}: ${JSON.stringify(response.body).slice(0, 400)}`);
            t.is(result?.structuredContent?.code ?? JSON.parse(result?.content?.[0]?.text ?? '{}').code, 'confirmation_required', `${tool.name}: ${JSON.stringify(result).slice(0, 200)}`);
          }
          t.deepEqual(await snapshot(), before, `${tool.name} changed data before confirmation`);
          checked += 1;
        }
      }
      t.log(`${checked} destructive tools asked for confirmation first`);
    } finally {
      await server.close();
    }
  });
}
