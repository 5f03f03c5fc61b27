/**
 * The audit log at size: a log of 1,000,000 records (100,000 with --quick) over two tenants and
 * thirty days, written through the same group-commit path the MCP host uses; then the console's
 * JSON API answers filtered queries (tenant + product + one-day window) and streams the export.
 */
import { randomUUID } from 'node:crypto';
import { writeBatch, type BatchedAudit } from '../db/audit.js';
import { seedDemoIfEmpty } from '../db/demo.js';
import { migrateLatest } from '../db/migrate.js';
import { defaultSeeders } from '../mounts.js';
import { PRODUCTS } from '../mcp/products/index.js';
import { authorizeWithPassword } from '../test/helpers/oauth.js';
import { createDatabase, log, PASSWORD, percentile, QUICK, startPortico, type Kind } from './common.js';

export const RECORDS = QUICK ? 100_000 : 1_000_000;
const DAY = 86_400_000;
/** Filtered queries measured: enough that p99 is not simply the slowest one. */
const QUERIES = 200;

export interface AuditRow {
  database: Kind;
  records: number;
  fill_seconds: number;
  /** The first query of a freshly started server (a new database connection, the token resolved). */
  query_first_ms: number;
  /** Over QUERIES queries after the first. */
  query_p50_ms: number;
  query_p99_ms: number;
  query_rows: number;
  export_records: number;
  export_jsonl_records_per_s: number;
  export_csv_records_per_s: number;
}

async function exportRate(url: string, token: string, format: 'jsonl' | 'csv'): Promise<{ records: number; perSecond: number }> {
  const started = performance.now();
  const response = await fetch(`${url}/api/mcp/v1/audit/export?format=${format}`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200 || !response.body) throw new Error(`export failed: ${response.status}`);
  let lines = 0;
  // indexOf, not a loop over every byte: the count must not be what limits the measured rate.
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines += 1;
  }
  const seconds = (performance.now() - started) / 1000;
  const records = format === 'csv' ? lines - 1 : lines;
  return { records, perSecond: Math.round(records / seconds) };
}

export async function auditLog(kinds: Kind[]): Promise<AuditRow[]> {
  const rows: AuditRow[] = [];
  for (const kind of kinds) {
    const database = await createDatabase(kind);
    const pool = database.connect();
    let server: Awaited<ReturnType<typeof startPortico>> | undefined;
    try {
      await migrateLatest(pool);
      await seedDemoIfEmpty(pool, { password: PASSWORD, seeders: defaultSeeders() });
      const tenants: Array<{ id: string; slug: string }> = await pool('tenants').select('id', 'slug');
      const users: Array<{ id: string; email: string }> = await pool('users').select('id', 'email');
      const products = PRODUCTS.map((p) => p.id);
      const connections = Array.from({ length: 20 }, () => randomUUID());
      const end = Date.now();
      const start = end - 30 * DAY;
      const fillStarted = performance.now();
      const BATCH = 5_000;
      for (let done = 0; done < RECORDS; done += BATCH) {
        const inputs: BatchedAudit[] = [];
        for (let i = done; i < Math.min(RECORDS, done + BATCH); i += 1) {
          const tenant = tenants[i % tenants.length];
          const product = products[Math.floor(i / tenants.length) % products.length];
          inputs.push({
            tenantId: tenant.id, userId: users[i % users.length].id, clientId: `client-${i % 7}`, connectionId: connections[i % connections.length], product,
            kind: 'tool', name: `${product}.list_items`, args: { limit: i % 100 }, outcome: i % 50 === 0 ? 'not_found' : 'ok', durationMs: i % 40,
            requestId: randomUUID(), time: start + Math.floor(((end - start) * i) / RECORDS),
          });
        }
        await pool.transaction((trx) => writeBatch(trx, inputs));
      }
      const fillSeconds = (performance.now() - fillStarted) / 1000;
      log(`audit (${kind}): ${RECORDS} records written in ${fillSeconds.toFixed(1)} s`);
      if (kind === 'postgres') await pool.raw('analyze audit_log');

      server = await startPortico(database);
      const token = (await authorizeWithPassword(server.url, {
        email: 'admin@acme.example', password: PASSWORD, tenant: 'acme', resource: `${server.url}/api/mcp`, scopes: ['console.audit.read'],
      })).accessToken;
      const query = async (i: number) => {
        const from = start + ((i * 7) % 29) * DAY + (i % 24) * 3_600_000;
        const product = products[i % products.length];
        const t0 = performance.now();
        const response = await fetch(`${server!.url}/api/mcp/v1/audit?product=${product}&from=${from}&to=${from + DAY}&limit=50`, { headers: { authorization: `Bearer ${token}` } });
        const body = (await response.json()) as { records?: unknown[] };
        if (response.status !== 200 || !body.records) throw new Error(`audit query failed: ${response.status}`);
        return { ms: performance.now() - t0, rows: body.records.length };
      };
      // The first request of a fresh server also opens a database connection and resolves the
      // token: reported on its own, not in the percentiles of the query.
      const first = await query(0);
      const times: number[] = [];
      let queryRows = 0;
      for (let i = 1; i <= QUERIES; i += 1) {
        const { ms, rows } = await query(i);
        times.push(ms);
        queryRows += rows;
      }
      times.sort((a, b) => a - b);
      const jsonl = await exportRate(server.url, token, 'jsonl');
      const csv = await exportRate(server.url, token, 'csv');
      const row: AuditRow = {
        database: kind, records: RECORDS, fill_seconds: Number(fillSeconds.toFixed(1)),
        query_first_ms: Number(first.ms.toFixed(2)), query_p50_ms: percentile(times, 0.5), query_p99_ms: percentile(times, 0.99), query_rows: Math.round(queryRows / times.length),
        export_records: jsonl.records, export_jsonl_records_per_s: jsonl.perSecond, export_csv_records_per_s: csv.perSecond,
      };
      rows.push(row);
      log(`audit (${kind}): first query ${row.query_first_ms} ms, then p50 ${row.query_p50_ms} ms p99 ${row.query_p99_ms} ms; export of ${jsonl.records} records: JSONL ${jsonl.perSecond}/s, CSV ${csv.perSecond}/s`);
    } finally {
      await server?.stop();
      await pool.destroy();
      await database.drop();
    }
  }
  return rows;
}
