/**
 * midas.usage_report names the deprecated endpoints still being called: every one of them, not
 * only those among the 100 deprecated most recently. No tool creates endpoints (they come from the
 * organization's API), so the test writes them as an import would.
 */
import { randomUUID } from 'node:crypto';
import { setSurfaceStatus } from '../../db/surfaces.js';
import { connect, mcpTest } from '../helpers/mcp.js';

const DAY = 86_400_000;

mcpTest('midas.usage_report marks every deprecated endpoint that still gets calls, past the 100 newest too', async (t, server) => {
  await setSurfaceStatus(server.db, 'midas', 'live');
  await server.events.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
  const tenantId = server.tenants.acme.id;
  const today = Math.floor(Date.now() / DAY) * DAY;
  const created = today - 300 * DAY;
  // The first is the oldest: 100 deprecated endpoints are newer than it.
  const endpoints = Array.from({ length: 101 }, (_, i) => ({
    id: randomUUID(), tenant_id: tenantId, method: 'GET', path: `/v0/legacy/${String(i).padStart(3, '0')}`, summary: null, status: 'deprecated',
    rate_limit_per_minute: 10, created_at: created + i * 1000, updated_at: created + i * 1000,
  }));
  await server.db('midas_endpoints').insert(endpoints);
  await server.db('midas_usage_daily').insert(endpoints.map((e) => ({ id: randomUUID(), tenant_id: tenantId, endpoint_id: e.id, day: today, calls: 7, errors: 0, p95_ms: 50 })));

  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  try {
    const prompt = await client.getPrompt({ name: 'midas.usage_report', arguments: { days: '7' } });
    const text = (prompt.messages[0].content as { text: string }).text;
    const legacy = text.split('\n').filter((line) => line.startsWith('- GET /v0/legacy/'));
    t.is(legacy.length, 101);
    t.deepEqual(legacy.filter((line) => !line.includes(' (deprecated): 7 calls')), [], 'each is marked deprecated');
  } finally {
    await close();
  }
});
