/**
 * aegis.resolve_finding is idempotent and keeps the first resolution (docs/cavalier_aegis_harvest_reclaim.md):
 * the same call made several times at once, as a client retrying or calling tools in parallel does,
 * answers each time with the finding resolved, and exactly one of them resolved it. A resolution
 * waiting for a finding whose scan is being deleted answers not_found (PostgreSQL).
 */
import { randomUUID } from 'node:crypto';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connect, mcpPostgresTest, mcpTest } from '../helpers/mcp.js';
import { aegis } from '../../mcp/products/aegis/index.js';
import { call, confirmation, connections, inLine } from './parallel_support.js';

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

mcpPostgresTest('a finding whose scan is deleted while a resolution waits for it answers not_found; one resolved meanwhile answers already_resolved', async (t, server) => {
  const [a, b, c] = await connections(server, { product: 'aegis', tenant: 'acme', scopes: Object.keys(aegis.scopes) }, 3);
  try {
    const scan = await call(a.client, 'aegis.start_scan', {});
    t.true(scan.ok && scan.value.findings.length > 0, JSON.stringify(scan));
    const gone: string = scan.value.findings[0].id;

    const deleteNow = await confirmation(a.client, 'aegis.delete_scan', { scan_id: scan.value.id });
    const [deleted, resolved] = await inLine(t, server.db, 'aegis_findings', gone, [
      deleteNow,
      () => call(b.client, 'aegis.resolve_finding', { finding_id: gone, note: 'fixed' }),
    ]);
    t.true(deleted.ok, JSON.stringify(deleted));
    t.is(resolved.code, 'not_found', JSON.stringify(resolved));

    const other = await call(a.client, 'aegis.start_scan', {});
    const finding: string = other.value.findings[0].id;
    const [first, second] = await inLine(t, server.db, 'aegis_findings', finding, [
      () => call(b.client, 'aegis.resolve_finding', { finding_id: finding, note: 'first' }),
      () => call(c.client, 'aegis.resolve_finding', { finding_id: finding, note: 'second' }),
    ]);
    t.like(first.value, { status: 'resolved', already_resolved: false, resolution_note: 'first' });
    t.like(second.value, { status: 'resolved', already_resolved: true, resolution_note: 'first' });
  } finally {
    await Promise.all([a.close(), b.close(), c.close()]);
  }
});
