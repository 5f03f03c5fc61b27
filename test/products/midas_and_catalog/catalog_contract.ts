/**
 * The trust contract over the whole catalog, so a new tool is covered the day it is declared:
 * every tool refuses a grant that lacks its scope (HTTP 403 with the scope to step up to), and
 * every destructive tool's first call answers confirmation_required and changes nothing, unless
 * the call cannot happen (a record in a state the tool refuses), which it refuses at once.
 */
import test from 'ava';
import type { Knex } from 'knex';
import { z } from 'zod';
import { PRODUCTS } from '../../../mcp/products/index.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { startMcpServer, grant, rawCall, auditOf } from '../../helpers/mcp.js';
import { sample } from '../../helpers/schema_sample.js';

const live = PRODUCTS.filter((p) => p.status === 'live');

/** The demo data holds no record some destructive tools act on: one is brought into such a state first. */
const PREPARE: Record<string, (db: Knex, tenantId: string) => Promise<unknown>> = {
  'cavalier.complete_sow': async (db, tenantId) => {
    const sow = await db('cavalier_sows').where({ tenant_id: tenantId }).orderBy('id').first('id');
    return db('cavalier_sows').where({ id: sow.id }).update({ status: 'signed' });
  },
};

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
          await PREPARE[tool.name]?.(server.db, server.tenants.acme.id);
          const sampled = sample(z.toJSONSchema(z.object(tool.input)) as Record<string, unknown>) as Record<string, unknown>;
          const [idKey] = Object.keys(tool.input).filter((k) => k.endsWith('_id'));
          // The demo records in turn: one the tool refuses (a final state) is refused at once; the
          // contract needs one it would act on.
          const candidates = idKey ? (await server.db(product.entities![idKey.slice(0, -3)]).where({ tenant_id: server.tenants.acme.id }).orderBy('id').select('id')).map((row) => row.id) : [undefined];
          const before = await snapshot();
          let asked = false;
          for (const id of candidates) {
            const args = idKey ? { ...sampled, [idKey]: id } : sampled;
            // `confirmed: true` with no pending confirmation is a first call too (DESIGN.md §6 step 5); it
            // goes first, because a plain first call leaves a pending confirmation that it would consume.
            const codes: unknown[] = [];
            for (const confirmed of [true, undefined]) {
              const response = await rawCall(server, token, product.id, 'tools/call', { name: tool.name, arguments: confirmed ? { ...args, confirmed } : args });
              t.is(response.status, 200, tool.name);
              const result = response.body?.result;
              codes.push(result ? (result.isError ? result.structuredContent?.code ?? JSON.parse(result.content?.[0]?.text ?? '{}').code : 'ok') : response.body?.error?.data?.code);
            }
            t.is(codes[0], codes[1], `${tool.name}: a first call with confirmed: true answers as a plain one`);
            if (codes[0] === 'confirmation_required') {
              asked = true;
              break;
            }
            t.true(['conflict', 'invalid_arguments'].includes(String(codes[0])), `${tool.name} ${JSON.stringify(args)}: ${String(codes[0])}`);
          }
          t.true(asked, `${tool.name} asked for confirmation for none of the demo records`);
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
