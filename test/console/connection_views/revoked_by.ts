/**
 * A revoked connection says who revoked it and why: the person who did (an administrator in the
 * console, or its own person), in the JSON API and on its page, the page also for its person, who
 * cannot read an administrator's audit records; and, when nobody did, why Portico or an operator
 * did, from the revocation's audit record.
 */
import test from 'ava';
import { revokeGrant } from '../../../auth/revocation.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { signIn, startConsole } from '../setup.js';

/** The page's text without its markup. */
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

for (const kind of databasesUnderTest()) {
  test(`a revoked connection names the person who revoked it, or why it was revoked [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    const admin = await f.consoleToken('acmeAdmin', 'acme');
    const ann = f.forge.ann.connection.id;

    const live = (await (await f.api(`/connections/${ann}`, admin)).json()) as { revoked_by: unknown };
    t.is(live.revoked_by, null);
    const revoked = (await (await f.api(`/connections/${ann}`, admin, { method: 'DELETE' })).json()) as { revoked_by: unknown };
    t.deepEqual(revoked.revoked_by, { id: f.users.acmeAdmin, email: 'admin@acme.example' });
    const listed = (await (await f.api('/connections?include_revoked=true', admin)).json()) as { connections: Array<{ id: string; revoked_by: unknown }> };
    t.deepEqual(listed.connections.find((c) => c.id === ann)?.revoked_by, { id: f.users.acmeAdmin, email: 'admin@acme.example' });

    // Ann sees who cut her connection off, though the revocation's record is the administrator's.
    const member = await signIn(f, 'ann@acme.example');
    t.regex(textOf((await member.request(`/api/mcp/connections/${ann}`)).text), /revoked \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC by admin@acme\.example \(through the console API\)/);
    t.regex(textOf((await member.request(`/api/mcp/connections/${ann}/revoke`)).text), /already revoked .* UTC by admin@acme\.example \(through the console API\)\. There is nothing more to revoke/);

    // Revoked by Portico (a refresh token presented again): nobody's name, and the reason in words.
    const bob = f.forge.bob.connection;
    await revokeGrant(f.server.portico.context.db, f.events, bob.grant_id, 'refresh_token_reuse');
    t.is(((await (await f.api(`/connections/${bob.id}`, admin)).json()) as { revoked_by: unknown }).revoked_by, null);
    const page = textOf((await (await signIn(f, 'admin@acme.example')).request(`/api/mcp/connections/${bob.id}`)).text);
    t.regex(page, /revoked \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC \(a refresh token it had already replaced was presented again, a sign of a stolen token\)/);
    t.notRegex(page, /UTC by /);
  });
}
