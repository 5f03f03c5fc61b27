/**
 * Taking a copy of the audit log (an export) is an action a customer's own auditors look for in the
 * log, as a revocation is: who took the organization's records, which ones, and when. Each export
 * is recorded once in the organization's log, naming the person and the request, before the records
 * are read, so a whole chain's export holds its own record.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { signIn, startConsole } from '../setup.js';

type Json = any;

for (const kind of databasesUnderTest()) {
  test(`an audit export through the API or the page is recorded in the log, in the export itself when it is the whole chain [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    const { db } = f.server.portico.context;
    try {
      const token = await f.consoleToken('acmeAdmin', 'acme');
      const exported = await f.api('/audit/export?format=jsonl', token, { headers: { 'x-request-id': 'export-1' } });
      t.is(exported.status, 200);
      const lines: Json[] = (await exported.text()).trimEnd().split('\n').map((line) => JSON.parse(line));
      t.like(lines.at(-1), { name: 'audit.export', request_id: 'export-1', user_id: f.users.acmeAdmin, product: 'console', outcome: 'ok' }, 'the whole chain ends with its own export');
      t.deepEqual(JSON.parse(lines.at(-1).args_redacted), { format: 'jsonl', whole: true });

      const member = await signIn(f, 'ann@acme.example');
      const page = await member.request('/api/mcp/audit/export?format=csv&product=forge', { headers: { 'x-request-id': 'export-2' } });
      t.is(page.status, 200);

      const records = await db('audit_log').where({ tenant_id: f.tenants.acme, name: 'audit.export' }).orderBy('seq');
      t.deepEqual(records.map((r: Json) => [r.request_id, r.user_id]), [['export-1', f.users.acmeAdmin], ['export-2', f.users.ann]]);
      t.deepEqual(JSON.parse(records[1].args_redacted), { format: 'csv', whole: false, product: 'forge' }, 'the selection as asked for');
      t.deepEqual(await db('audit_log').where({ tenant_id: f.tenants.globex, name: 'audit.export' }), [], 'recorded in the exporter\'s organization only');
    } finally {
      await f.close();
    }
  });

  test(`an export's record says whether it was the whole chain, and the query string cannot add to it [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    const { db } = f.server.portico.context;
    try {
      const token = await f.consoleToken('acmeAdmin', 'acme');
      // `whole` is no parameter of the export: refused (400, nothing recorded), never written into its record.
      const forged = await f.api('/audit/export?format=jsonl&whole=false', token);
      t.is(forged.status, 400);
      t.regex(await forged.text(), /unknown parameter whole: this takes format, product/);
      const chain = await f.api('/audit/export?format=jsonl', token, { headers: { 'x-request-id': 'export-chain' } });
      t.is(chain.headers.get('x-audit-export'), 'chain');
      await chain.text();
      const member = await signIn(f, 'ann@acme.example');
      t.is((await member.request('/api/mcp/audit/export?format=csv&whole=true')).status, 400);
      const selection = await member.request('/api/mcp/audit/export?format=csv', { headers: { 'x-request-id': 'export-selection' } });
      t.is(selection.headers.get('x-audit-export'), 'selection');

      const records = await db('audit_log').where({ tenant_id: f.tenants.acme, name: 'audit.export' }).orderBy('seq');
      t.deepEqual(records.map((r: Json) => [r.request_id, JSON.parse(r.args_redacted).whole, JSON.parse(r.args_redacted).format]), [
        ['export-chain', true, 'jsonl'],
        ['export-selection', false, 'csv'],
      ]);
    } finally {
      await f.close();
    }
  });

  test(`another site's link to the export page is refused, and a HEAD takes no copy: neither is recorded as an export, a HEAD probing another organization's connection is [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    const { db } = f.server.portico.context;
    const exports = async () => Number((await db('audit_log').where({ tenant_id: f.tenants.acme, name: 'audit.export' }).count({ n: '*' }).first())?.n);
    try {
      const admin = await signIn(f, 'admin@acme.example');
      for (const site of ['cross-site', 'same-site']) {
        const linked = await admin.request('/api/mcp/audit/export?format=csv', { headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate' } });
        t.is(linked.status, 403, site);
        t.regex(linked.text, /csrf_failed/);
      }
      const head = await admin.request('/api/mcp/audit/export?format=jsonl', { method: 'HEAD' });
      t.is(head.status, 200);
      t.regex(head.headers.get('content-disposition') ?? '', /^attachment; filename="portico-audit-acme-/);
      const token = await f.consoleToken('acmeAdmin', 'acme');
      t.is((await f.api('/audit/export', token, { method: 'HEAD' })).status, 200);
      t.is(await exports(), 0, 'nothing recorded');
      // A HEAD naming another organization's connection is refused as a GET is, and recorded as the probe it is.
      const foreign = await admin.request(`/api/mcp/audit/export?format=jsonl&connection=${f.forge.globexAdmin.connection.id}`, { method: 'HEAD', headers: { 'x-request-id': 'head-foreign' } });
      t.is(foreign.status, 403);
      const probes = await db('audit_log').where({ tenant_id: f.tenants.acme, outcome: 'forbidden_cross_tenant' }).pluck('request_id');
      t.deepEqual(probes, ['head-foreign']);
      t.is(await exports(), 0, 'still no export recorded');
      // Typed in (no Sec-Fetch-Site: none) or from the console's own page, it is an export.
      t.is((await admin.request('/api/mcp/audit/export?format=csv', { headers: { 'sec-fetch-site': 'none' } })).status, 200);
      t.is((await admin.request('/api/mcp/audit/export?format=csv')).status, 200);
      t.is(await exports(), 2);
    } finally {
      await f.close();
    }
  });
}
