/**
 * Read tools are audited by group commit, outside any transaction of theirs (db/audit.ts
 * AuditWriter): that is only sound if a tool whose scope ends in `.read` never writes. This
 * holds the whole catalog to it: every read tool, called with valid arguments aimed at real
 * records, leaves every table of product data exactly as it was.
 */
import test from 'ava';
import { z } from 'zod';
import { PRODUCTS } from '../../../mcp/products/index.js';
import { dialectOf } from '../../../db/connect.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { startMcpServer, grant, rawCall } from '../../helpers/mcp.js';
import { sample } from '../../helpers/schema_sample.js';

// Bookkeeping that a read may legitimately touch: its own audit record, the connection's use
// counters, the OAuth store, confirmations, migrations, the running instances (their heartbeat).
const BOOKKEEPING = /^(audit_log|audit_heads|connections|oidc_payloads|mcp_confirmations|secrets|surfaces|instances|knex_migrations.*)$/;

for (const kind of databasesUnderTest()) {
  test(`no read tool of the catalog writes product data [${kind}]`, async (t) => {
    t.timeout(180_000);
    const server = await startMcpServer(kind);
    try {
      const db = server.db;
      const tables: string[] = dialectOf(db) === 'postgres'
        ? (await db.raw(`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`)).rows.map((r: { name: string }) => r.name)
        : (await db.raw(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`)).map((r: { name: string }) => r.name);
      const watched = tables.filter((name) => !BOOKKEEPING.test(name)).sort();
      t.true(watched.includes('forge_conversations') && watched.includes('users'), `watching ${watched.length} tables`);
      const snapshot = async () => Object.fromEntries(await Promise.all(watched.map(async (name) => [name, await db(name).orderByRaw('1')])));
      let checked = 0;
      for (const product of PRODUCTS.filter((p) => p.status === 'live')) {
        const { token } = await grant(server, { product: product.id, tenant: 'acme', scopes: Object.keys(product.scopes) });
        for (const tool of product.tools.filter((candidate) => candidate.scope.endsWith('.read') && !candidate.destructive)) {
          const args = sample(z.toJSONSchema(z.object(tool.input)) as Record<string, unknown>) as Record<string, unknown>;
          for (const key of Object.keys(tool.input).filter((k) => k.endsWith('_id'))) {
            const row = await db(product.entities![key.slice(0, -3)]).where({ tenant_id: server.tenants.acme.id }).first('id');
            args[key] = row.id;
          }
          const before = await snapshot();
          const response = await rawCall(server, token, product.id, 'tools/call', { name: tool.name, arguments: args });
          t.is(response.status, 200, `${tool.name}: ${JSON.stringify(response.body).slice(0, 200)}`);
          t.deepEqual(await snapshot(), before, `${tool.name} wrote product data`);
          checked += 1;
        }
      }
      t.log(`${checked} read tools left ${watched.length} tables untouched`);
    } finally {
      await server.close();
    }
  });
}
