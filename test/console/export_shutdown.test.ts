/**
 * An audit export is recorded (`audit.export`, ok) before it streams; one that does not end whole
 * gets a second record with the reason, so that the log never says a copy was taken whole when it
 * was not. Shutdown lets an export run through its drain; one still streaming when the drain's time
 * is up is cut, and recorded `unavailable` before the pool closes. A client that goes away on its
 * own is not a failure of ours: its export keeps the one record.
 */
import test from 'ava';
import http from 'node:http';
import { verifyStoredChain } from '../../db/audit.js';
import { bulkChain } from '../helpers/audit.js';
import { databasesUnderTest } from '../helpers/db.js';
import { until } from '../helpers/poll.js';
import { startConsole, type ConsoleFixture } from './setup.js';

/**
 * Starts an export with node:http (a paused response stops reading its socket, so the server's
 * writes stop once the sockets' buffers are full) and reads its first chunk only.
 */
async function exportReadingOneChunk(f: ConsoleFixture, token: string, requestId: string): Promise<http.IncomingMessage> {
  const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(`${f.server.url}/api/mcp/v1/audit/export?format=jsonl`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId } }, resolve).on('error', reject));
  if (response.statusCode !== 200) throw new Error(`the export answered ${response.statusCode}`);
  await new Promise((resolve) => response.once('readable', resolve));
  if (!response.read()) throw new Error('no first chunk');
  return response;
}

for (const kind of databasesUnderTest()) {
  test(`an export cut off by shutdown is recorded unavailable beside its ok record, and its client sees a cut [${kind}]`, async (t) => {
    t.timeout(120_000); // shutdown waits out its drain (DRAIN_MS, 10 s) for the export
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      // About 20 MB of JSONL, far more than the sockets between server and client hold.
      await bulkChain(db, f.tenants.acme, 30_000);
      const admin = await f.consoleToken('acmeAdmin', 'acme');

      // A client that goes away on its own: its export keeps the one record it began with.
      const left = await exportReadingOneChunk(f, admin, 'export-left');
      left.destroy();
      const requestLine = () => f.server.logs.map((line) => JSON.parse(line) as Record<string, any>).find((line) => line.request_id === 'export-left' && line.msg === 'request');
      t.truthy(await until(10_000, async () => requestLine()), 'the server is done with the export its client left');

      // A client that reads nothing past the first chunk: the export is under way when shutdown
      // begins and still is when the drain's time is up.
      const cut = await exportReadingOneChunk(f, admin, 'export-cut');
      await f.server.stop();
      // Reading on, the client finds the copy cut short, not a file that ends cleanly.
      const ending = await new Promise<string>((resolve) => {
        cut.once('end', () => resolve('a clean end'));
        cut.once('error', (error) => resolve(`cut: ${error.message}`));
        cut.resume();
      });
      t.regex(ending, /^cut: /);

      const after = f.server.database.connect();
      try {
        const recordsOf = (requestId: string) => after('audit_log').where({ tenant_id: f.tenants.acme, request_id: requestId }).orderBy('seq').select('name', 'outcome');
        t.deepEqual(await recordsOf('export-left'), [{ name: 'audit.export', outcome: 'ok' }]);
        t.deepEqual(await recordsOf('export-cut'), [{ name: 'audit.export', outcome: 'ok' }, { name: 'audit.export', outcome: 'unavailable' }]);
        t.like(await verifyStoredChain(after, f.tenants.acme), { ok: true }, 'the second record extends the chain as any record does');
      } finally {
        await after.destroy();
      }
    } finally {
      await f.close();
    }
  });
}
