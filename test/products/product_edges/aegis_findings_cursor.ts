/**
 * aegis.list_findings without scan_id lists the latest scan. A client paging that listing keeps
 * reading the scan its first page came from: a scan started between two pages must not switch the
 * listing to the new scan half-way (findings skipped, findings of two scans mixed in one listing).
 */
import { randomUUID } from 'node:crypto';
import { connect, mcpTest } from '../../helpers/mcp.js';
import { aegis } from '../../../mcp/products/aegis/index.js';

mcpTest('aegis.list_findings pages the scan it started on when a new scan runs between pages', async (t, server) => {
  const { client, close } = await connect(server, { product: 'aegis', tenant: 'acme', scopes: Object.keys(aegis.scopes) });
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args });
    t.falsy(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`);
    return result.structuredContent as any;
  };
  try {
    // A latest scan with several findings: the demo scan's finding, twice more.
    const latest = await server.db('aegis_scans').where({ tenant_id: server.tenants.acme.id }).orderBy([{ column: 'started_at', order: 'desc' }, { column: 'id', order: 'desc' }]).first();
    const finding = await server.db('aegis_findings').where({ scan_id: latest.id }).first();
    for (const id of [randomUUID(), randomUUID()]) await server.db('aegis_findings').insert({ ...finding, id });

    const first = await call('aegis.list_findings', { limit: 1 });
    t.truthy(first.scan_id, 'the demo tenant has a scan');
    t.truthy(first.next_cursor, 'its latest scan has more than one finding');
    const whole = await call('aegis.list_findings', { scan_id: first.scan_id, limit: 100 });

    const started = await call('aegis.start_scan');
    t.not(started.id, first.scan_id);

    const rest = await call('aegis.list_findings', { limit: 100, cursor: first.next_cursor });
    t.is(rest.scan_id, first.scan_id, 'the second page comes from the scan of the first');
    t.deepEqual([...first.findings, ...rest.findings].map((f: any) => f.id), whole.findings.map((f: any) => f.id), 'the pages hold that scan\'s findings, each once');
  } finally {
    await close();
  }
});
