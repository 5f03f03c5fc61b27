/**
 * References from the console into another organization (or, for a member, into another person's
 * connection) are refused the same way by the listing and the export, and a reference into another
 * organization is audited as forbidden_cross_tenant in the caller's log (DESIGN.md §3).
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { signIn, startConsole } from '../setup.js';

type Json = any; // response bodies are asserted field by field

for (const kind of databasesUnderTest()) {
  test(`the audit export refuses another organization's or person's connection as the listing does [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const foreign = f.forge.globexAdmin.connection.id;
      const listing = await f.api(`/audit?connection=${foreign}`, admin);
      t.is(listing.status, 403);
      t.is(((await listing.json()) as Json).error.code, 'forbidden_cross_tenant');
      const exported = await f.api(`/audit/export?connection=${foreign}`, admin);
      const text = await exported.text();
      t.is(exported.status, 403, `export: ${exported.status} ${exported.headers.get('x-audit-export')} ${text.slice(0, 200)}`);
      t.regex(text, /forbidden_cross_tenant/);

      const ann = await f.consoleToken('ann', 'acme');
      const bobs = f.forge.bob.connection.id;
      t.is((await f.api(`/audit?connection=${bobs}`, ann)).status, 403);
      const memberExport = await f.api(`/audit/export?connection=${bobs}`, ann);
      const memberText = await memberExport.text();
      t.is(memberExport.status, 403, `member export: ${memberExport.status} ${memberText.slice(0, 200)}`);
      t.regex(memberText, /"forbidden"/);
    } finally {
      await f.close();
    }
  });

  test(`a console reference into another organization is audited in the caller's log [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const foreign = f.forge.globexAdmin.connection.id;
      t.is((await f.api(`/connections/${foreign}`, admin)).status, 403);
      t.is((await f.api(`/connections/${foreign}`, admin, { method: 'DELETE' })).status, 403);
      const records = await db('audit_log').where({ tenant_id: f.tenants.acme, outcome: 'forbidden_cross_tenant' }).select('name', 'product');
      t.deepEqual(records, [{ name: 'console.connection', product: 'console' }, { name: 'console.connection', product: 'console' }], "one record per refusal, in acme's log");
      t.is((await db('audit_log').where({ tenant_id: f.tenants.globex, outcome: 'forbidden_cross_tenant' })).length, 0, "nothing in the victim's log");
    } finally {
      await f.close();
    }
  });

  test(`a reference into another organization that another site's link started is recorded as started there, not as the person's own [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const admin = await signIn(f, 'admin@acme.example');
      const foreign = f.forge.globexAdmin.connection.id;
      const navigate = { 'sec-fetch-mode': 'navigate' };
      t.is((await admin.request(`/api/mcp/connections/${foreign}`, { headers: { ...navigate, 'sec-fetch-site': 'cross-site' } })).status, 403);
      t.is((await admin.request(`/api/mcp/audit?connection=${foreign}`, { headers: { ...navigate, 'sec-fetch-site': 'same-site' } })).status, 403);
      t.is((await admin.request(`/api/mcp/connections/${foreign}/revoke`, { headers: { ...navigate, 'sec-fetch-site': 'none' } })).status, 403);
      t.is((await admin.request(`/api/mcp/connections/${foreign}`)).status, 403);
      const records = await db('audit_log').where({ tenant_id: f.tenants.acme, outcome: 'forbidden_cross_tenant' }).orderBy('seq').select('user_id', 'args_redacted');
      t.deepEqual(records.map((r: Json) => [r.user_id, JSON.parse(r.args_redacted)]), [
        [f.users.acmeAdmin, { connection_id: foreign, started_by: 'cross-site' }],
        [f.users.acmeAdmin, { connection_id: foreign, started_by: 'same-site' }],
        [f.users.acmeAdmin, { connection_id: foreign }],
        [f.users.acmeAdmin, { connection_id: foreign }],
      ]);
    } finally {
      await f.close();
    }
  });
}
