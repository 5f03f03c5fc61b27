/**
 * aegis.resolve_finding is idempotent and keeps the first resolution (docs/cavalier_aegis_harvest_reclaim.md):
 * the same call made several times at once, as a client retrying or calling tools in parallel does,
 * answers each time with the finding resolved, and exactly one of them resolved it.
 */
import { randomUUID } from 'node:crypto';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connect, mcpTest } from '../helpers/mcp.js';
import { aegis } from '../../mcp/products/aegis/index.js';

mcpTest('aegis.resolve_finding called several times at once resolves the finding once and answers every call', async (t, server) => {
  const { client, close } = await connect(server, { product: 'aegis', tenant: 'acme', scopes: Object.keys(aegis.scopes) });
  try {
    const finding = await server.db('aegis_findings').where({ tenant_id: server.tenants.acme.id }).first();
    for (let round = 0; round < 3; round += 1) {
      const id = randomUUID();
      await server.db('aegis_findings').insert({ ...finding, id, status: 'open', resolved_at: null, resolved_by: null, resolution_note: null });
      const outcomes = await Promise.all(Array.from({ length: 4 }, (_, i) => client.callTool({ name: 'aegis.resolve_finding', arguments: { finding_id: id, note: `call ${i}` } }).then(
        (result) => ({ ok: !result.isError, value: result.structuredContent as any }),
        (error: McpError) => ({ ok: false, value: { code: (error as McpError & { data?: { code?: string } }).data?.code, message: error.message } }),
      )));
      t.deepEqual(outcomes.filter((o) => !o.ok || o.value.status !== 'resolved').map((o) => o.value), [], 'every call answers with the finding resolved');
      t.is(outcomes.filter((o) => o.value.already_resolved === false).length, 1, 'one call resolved it');
      const row = await server.db('aegis_findings').where({ id }).first();
      const first = outcomes.find((o) => o.value.already_resolved === false)!;
      t.is(row.resolution_note, first.value.resolution_note ?? row.resolution_note, 'the first resolution is kept');
      t.true(outcomes.every((o) => o.value.resolution_note === row.resolution_note), 'every answer shows the resolution that was kept');
    }
  } finally {
    await close();
  }
});
