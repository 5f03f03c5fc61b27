/**
 * What the pages say, read as a person reads it: counts in the singular when there is one ("1
 * call", not "1 calls"), an empty list of active connections that does not claim there are none at
 * all, and an activity chart whose summary counts only the days it draws.
 */
import test from 'ava';
import { appendAudit } from '../../../db/audit.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { signIn, startConsole } from '../setup.js';

/** The page's text without its markup. */
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

for (const kind of databasesUnderTest()) {
  test(`the pages count in the singular for one, and an empty list of active connections says so [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    const { db } = f.server.portico.context;
    const ann = f.forge.ann.connection.id;
    await db('connections').where({ id: ann }).update({ call_count: 1, last_used_at: Date.now() });
    const member = await signIn(f, 'ann@acme.example');
    t.regex(textOf((await member.request(`/api/mcp/connections/${ann}`)).text), /UTC \(1 call\)/);

    // One tool call today, and one stamped three days ahead (another instance's clock): the chart draws today's.
    await appendAudit(db, { tenantId: f.tenants.acme, userId: f.users.ann, kind: 'tool', product: 'forge', name: 'forge.list_conversations', outcome: 'ok' });
    await appendAudit(db, { tenantId: f.tenants.acme, userId: f.users.ann, kind: 'tool', product: 'forge', name: 'forge.list_conversations', outcome: 'ok', time: Date.now() + 3 * 86_400_000 });
    t.regex(textOf((await member.request('/api/mcp/connections')).text), /1 call in the last 14 days: forge 1 /);

    await db('connections').where({ id: ann }).update({ revoked_at: Date.now() });
    const hidden = textOf((await member.request('/api/mcp/connections')).text);
    t.regex(hidden, /No active connections\./);
    t.notRegex(hidden, /No connections yet/, 'a person whose connections were revoked is told there were none');
    t.regex(textOf((await member.request('/api/mcp/connections?revoked=1')).text), /Test client/);

    // The globex chain holds one record: its admin's sign-in.
    const globex = await signIn(f, 'admin@globex.example');
    t.regex(textOf((await globex.request('/api/mcp/audit/verify')).text), /intact The one record verifies\./);
  });
}
