/**
 * midas.usage_report lists at most ENDPOINTS_LISTED endpoints, however many the organization has:
 * the busiest, then those that need attention (deprecated and still called, or failing often),
 * then the next busiest, and says how many it left out and that its totals cover them all. It
 * names the deprecated endpoints still being called: every one of them, not only those among the
 * 100 deprecated most recently, listed or counted. No tool creates endpoints (they come from the
 * organization's API), so the tests write them as an import would, in place of the demo's.
 */
import { randomUUID } from 'node:crypto';
import { setSurfaceStatus } from '../../../db/surfaces.js';
import { ENDPOINTS_LISTED } from '../../../mcp/products/midas/prompts/usage_report.js';
import { connect, mcpTest, type McpTestServer } from '../../helpers/mcp.js';

const DAY = 86_400_000;

/** Ships midas and leaves acme with no endpoint: the demo's are removed. */
async function shippedWithoutDemoEndpoints(server: McpTestServer): Promise<string> {
  await setSurfaceStatus(server.db, 'midas', 'live');
  await server.events.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
  const tenantId = server.tenants.acme.id;
  await server.db('midas_usage_daily').where({ tenant_id: tenantId }).delete();
  await server.db('midas_endpoints').where({ tenant_id: tenantId }).delete();
  return tenantId;
}

/** Writes endpoints, each with one day of usage today. */
async function writeEndpoints(server: McpTestServer, tenantId: string, endpoints: Array<{ path: string; status?: 'deprecated'; calls: number; errors?: number }>, created = Date.now()) {
  const today = Math.floor(Date.now() / DAY) * DAY;
  const rows = endpoints.map((e, i) => ({
    id: randomUUID(), tenant_id: tenantId, method: 'GET', path: e.path, summary: null, status: e.status ?? 'active',
    rate_limit_per_minute: 10, created_at: created + i * 1000, updated_at: created + i * 1000,
  }));
  await server.db('midas_endpoints').insert(rows);
  await server.db('midas_usage_daily').insert(rows.map((row, i) => ({
    id: randomUUID(), tenant_id: tenantId, endpoint_id: row.id, day: today, calls: endpoints[i].calls, errors: endpoints[i].errors ?? 0, p95_ms: 50,
  })));
}

const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);

mcpTest('midas.usage_report lists the busiest endpoints and those that need attention, up to its bound, and counts the ones left out', async (t, server) => {
  const tenantId = await shippedWithoutDemoEndpoints(server);
  // 120 busy endpoints (1,000 calls down to 881), and six quiet ones that need attention.
  const busy = numbered('/v1/busy/', 120);
  const flaky = numbered('/v1/flaky/', 30);
  const old = numbered('/v0/old/', 3);
  await writeEndpoints(server, tenantId, [
    ...busy.map((path, i) => ({ path, calls: 1000 - i })),
    ...old.map((path) => ({ path, status: 'deprecated' as const, calls: 2 })),
    ...flaky.slice(0, 3).map((path) => ({ path, calls: 4, errors: 1 })),
  ]);

  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  try {
    const report = async () => {
      const prompt = await client.getPrompt({ name: 'midas.usage_report', arguments: { days: '7' } });
      const text = (prompt.messages[0].content as { text: string }).text;
      const lines = text.split('\n');
      return {
        text,
        listed: lines.filter((line) => line.startsWith('- GET ')).map((line) => line.slice('- GET '.length).split(/[ :]/)[0]),
        note: lines.find((line) => line.startsWith('- (')),
      };
    };

    // The 25 busiest; the six that need attention; the next busiest fill the other places.
    const first = await report();
    t.is(ENDPOINTS_LISTED, 50);
    t.deepEqual(first.listed, [...busy.slice(0, 44), ...flaky.slice(0, 3), ...old]);
    t.true(first.text.includes(`Totals: ${busy.reduce((sum, _, i) => sum + 1000 - i, 0) + 3 * 4 + 3 * 2} calls, 3 errors`), 'the totals count every endpoint');
    t.true(first.text.includes('- GET /v0/old/000 (deprecated): 2 calls'));
    t.is(first.note, '- (only 50 of the 126 endpoints counted are listed: the busiest, then those that need attention, then the next busiest. ' +
      '76 are left out, 0 of them deprecated and still called and 0 with an error rate of 5% or more; the totals above cover all 126)');

    // More endpoints need attention than there are places: the busiest of them are listed, the others counted.
    await writeEndpoints(server, tenantId, flaky.slice(3).map((path) => ({ path, calls: 4, errors: 1 })));
    const second = await report();
    t.deepEqual(second.listed, [...busy.slice(0, 25), ...flaky.slice(0, 25)]);
    t.is(second.note, '- (only 50 of the 153 endpoints counted are listed: the busiest, then those that need attention, then the next busiest. ' +
      '103 are left out, 3 of them deprecated and still called and 5 with an error rate of 5% or more; the totals above cover all 153)');
  } finally {
    await close();
  }
});

mcpTest('midas.usage_report marks every deprecated endpoint that still gets calls, past the 100 newest too, and counts those it leaves out', async (t, server) => {
  const tenantId = await shippedWithoutDemoEndpoints(server);
  // The first is the oldest: 100 deprecated endpoints are newer than it. All are called as often,
  // so the first listed are the first by path, the oldest among them.
  const legacy = numbered('/v0/legacy/', 101);
  await writeEndpoints(server, tenantId, legacy.map((path) => ({ path, status: 'deprecated' as const, calls: 7 })), Date.now() - 300 * DAY);

  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  try {
    const prompt = await client.getPrompt({ name: 'midas.usage_report', arguments: { days: '7' } });
    const text = (prompt.messages[0].content as { text: string }).text;
    const listed = text.split('\n').filter((line) => line.startsWith('- GET /v0/legacy/'));
    t.is(listed.length, ENDPOINTS_LISTED);
    t.true(listed[0].startsWith('- GET /v0/legacy/000 '), 'the oldest is listed');
    t.deepEqual(listed.filter((line) => !line.includes(' (deprecated): 7 calls')), [], 'each is marked deprecated');
    t.true(text.includes(`51 are left out, 51 of them deprecated and still called and 0 with an error rate of 5% or more; the totals above cover all 101)`), 'the others are counted as deprecated');
  } finally {
    await close();
  }
});
