/**
 * The audit log page says who did each thing: an administrator reading the organization's log
 * sees the person of every record (a sign-in to the console, a call through a connection, a
 * refused consent, none of which the other columns tell apart) and the client that made the call,
 * which is also what the page's Client filter takes.
 */
import test from 'ava';
import { appendAudit } from '../../../db/audit.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole, signIn } from '../../console/setup.js';

/** The text of each body row of the page's table, tags removed. */
function rows(html: string): string[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
}

for (const kind of databasesUnderTest()) {
  test(`every row of the audit log page names its person and client [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    const { db } = f.server.portico.context;
    await appendAudit(db, {
      tenantId: f.tenants.acme, userId: f.users.bob, clientId: 'dcr_bobs_editor', connectionId: f.forge.bob.connection.id, product: 'forge', kind: 'tool',
      name: 'forge.delete_conversation', args: {}, outcome: 'ok', requestId: 'req-bob',
    });
    await signIn(f, 'ann@acme.example'); // writes ann's console.sign_in

    const page = await (await signIn(f, 'admin@acme.example')).request('/api/mcp/audit');
    t.is(page.status, 200);
    const listed = rows(page.text);
    const bobs = listed.find((row) => row.includes('forge.delete_conversation'));
    t.truthy(bobs);
    t.regex(bobs ?? '', /bob@acme\.example/, 'the call names its person');
    t.regex(bobs ?? '', /dcr_bobs_editor/, 'the call names its client');
    const signIns = listed.filter((row) => row.includes('console.sign_in'));
    t.is(signIns.length, 2);
    t.true(signIns.some((row) => row.includes('ann@acme.example')), `whose sign-in: ${signIns.join(' | ')}`);
    t.true(signIns.some((row) => row.includes('admin@acme.example')), `whose sign-in: ${signIns.join(' | ')}`);
  });
}
