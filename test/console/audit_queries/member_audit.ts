/**
 * a member sees only their own audit records (DESIGN.md §8, auth/console/service.ts
 * parseAuditQuery), in the API, the export and the page. No existing test noticed the rule's
 * removal: the audit tests read as an administrator.
 */
import test from 'ava';
import { appendAudit } from '../../../db/audit.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole, signIn } from '../../console/setup.js';

type Json = any;

for (const kind of databasesUnderTest()) {
  test(`a member's audit listing, export and page hold only their own records; an admin's hold everyone's [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const record = (userId: string, connection: { id: string }, name: string) => appendAudit(db, {
        tenantId: f.tenants.acme, userId, clientId: 'dcr_test', connectionId: connection.id, product: 'forge', kind: 'tool', name, args: {}, outcome: 'ok', requestId: `req-${name}`,
      });
      await record(f.users.ann, f.forge.ann.connection, 'forge.list_conversations');
      await record(f.users.bob, f.forge.bob.connection, 'forge.delete_conversation');

      const member = await f.consoleToken('ann', 'acme');
      const listed: Json = await (await f.api('/audit', member)).json();
      t.true(listed.records.length >= 1);
      t.deepEqual([...new Set(listed.records.map((r: Json) => r.user_id))], [f.users.ann], 'only ann’s records');
      t.false(listed.records.some((r: Json) => r.name === 'forge.delete_conversation'));

      const exported = await (await f.api('/audit/export', member)).text();
      t.true(exported.includes('forge.list_conversations'));
      t.false(exported.includes('forge.delete_conversation'), 'the export is the member’s selection too');
      t.false(exported.includes(f.users.bob));

      const page = await (await signIn(f, 'ann@acme.example')).request('/api/mcp/audit');
      t.is(page.status, 200);
      t.regex(page.text, /forge\.list_conversations/);
      t.notRegex(page.text, /forge\.delete_conversation/, 'bob’s call is not on ann’s page');

      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const all: Json = await (await f.api('/audit', admin)).json();
      t.true(all.records.some((r: Json) => r.name === 'forge.delete_conversation'), 'an admin sees bob’s call');
    } finally {
      await f.close();
    }
  });

  test(`a member's connection page lists only their own records on it, not the admin's revoke [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      t.is((await f.api(`/connections/${f.forge.ann.connection.id}`, admin, { method: 'DELETE' })).status, 200);
      const page = await (await signIn(f, 'ann@acme.example')).request(`/api/mcp/connections/${f.forge.ann.connection.id}`);
      t.is(page.status, 200);
      t.notRegex(page.text, /connection\.revoke/, 'the admin’s record is not ann’s');
      // The admin's e-mail appears once, as who revoked it (test/console/connection_views/revoked_by.ts), not as a record's person.
      t.is(page.text.match(/admin@acme\.example/g)?.length, 1);
      t.regex(page.text, /UTC<\/time> by admin@acme\.example/);
      const adminPage = await (await signIn(f, 'admin@acme.example')).request(`/api/mcp/connections/${f.forge.ann.connection.id}`);
      t.regex(adminPage.text, /connection\.revoke/, 'the admin sees it on the same page');
    } finally {
      await f.close();
    }
  });

  test(`a member's activity chart counts only their own calls [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const record = (userId: string, connection: { id: string }) => appendAudit(db, {
        tenantId: f.tenants.acme, userId, clientId: 'dcr_test', connectionId: connection.id, product: 'forge', kind: 'tool', name: 'forge.list_conversations', args: {}, outcome: 'ok',
      });
      await record(f.users.ann, f.forge.ann.connection);
      for (let i = 0; i < 3; i++) await record(f.users.bob, f.forge.bob.connection);
      const chart = async (email: string) => /aria-label="(\d+) calls? in the last 14 days/.exec((await (await signIn(f, email)).request('/api/mcp/connections')).text)?.[1];
      t.is(await chart('ann@acme.example'), '1', 'ann sees her one call, not bob’s three');
      t.is(await chart('admin@acme.example'), '4', 'the admin sees the whole organization’s');
    } finally {
      await f.close();
    }
  });
}
