/**
 * the console's CSRF defences, each on its own. The existing tests refuse a forged token
 * and `Sec-Fetch-Site: cross-site`; these cover the two checks no test noticed the removal of:
 * the Origin check (browsers and clients that send no fetch metadata) and the binding of the
 * token to the session (a token read from one's own console page is no key to someone else's).
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole, Session, signIn } from '../../console/setup.js';
import { authenticateBearer } from '../../../db/grant_store.js';

for (const kind of databasesUnderTest()) {
  test(`a console form from a foreign Origin is refused even with the right token and no fetch metadata [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db, config } = f.server.portico.context;
      const admin = await signIn(f, 'admin@acme.example');
      const id = f.forge.ann.connection.id;
      const confirm = await admin.request(`/api/mcp/connections/${id}/revoke`);
      const csrf = Session.csrfOf(confirm.text);
      t.truthy(csrf);
      // An older browser, or one whose fetch metadata a proxy stripped: only Origin says where the form came from.
      const foreign = await admin.request(`/api/mcp/connections/${id}/revoke`, { form: { csrf }, headers: { origin: 'https://evil.example', 'sec-fetch-site': '' } });
      t.is(foreign.status, 403);
      t.regex(foreign.text, /csrf_failed/);
      t.truthy(await authenticateBearer(db, f.forge.ann.token, `${config.mcpUrl}/forge`), 'the refused form revoked nothing');
      const own = await admin.request(`/api/mcp/connections/${id}/revoke`, { form: { csrf } });
      t.is(own.location, '/api/mcp/connections?notice=revoked', 'the same form from our own origin works');
    } finally {
      await f.close();
    }
  });

  test(`a console CSRF token is bound to its session: another person's token does not work in this one [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db, config } = f.server.portico.context;
      const admin = await signIn(f, 'admin@acme.example');
      const attacker = await signIn(f, 'admin@globex.example');
      const attackerToken = Session.csrfOf((await attacker.request('/api/mcp/connections')).text);
      t.truthy(attackerToken);
      const id = f.forge.ann.connection.id;
      const confirm = await admin.request(`/api/mcp/connections/${id}/revoke`);
      const victimToken = Session.csrfOf(confirm.text);
      t.not(attackerToken, victimToken, 'two sessions get two tokens');
      const forged = await admin.request(`/api/mcp/connections/${id}/revoke`, { form: { csrf: attackerToken } });
      t.is(forged.status, 403);
      t.regex(forged.text, /csrf_failed/);
      t.truthy(await authenticateBearer(db, f.forge.ann.token, `${config.mcpUrl}/forge`), 'the refused form revoked nothing');
      // The same for a session's logout form.
      const out = await admin.request('/api/mcp/logout', { form: { csrf: attackerToken } });
      t.is(out.status, 403);
      t.is((await admin.request('/api/mcp/connections')).status, 200, 'still signed in');
    } finally {
      await f.close();
    }
  });
}
