/**
 * A connection can be ended from two sides at the same moment: a person revokes it in the console
 * while the purge (on this or another instance) ends it because its grant's lifetime is over
 * (auth/revocation.ts endExpiredGrants). Both take the connection's row and its tokens' rows; if
 * they took them in opposite orders, PostgreSQL would end one of them as a deadlock: the console
 * answered 500 `internal` for a revocation that then went through anyway.
 */
import test from 'ava';
import { endExpiredGrants } from '../../auth/revocation.js';
import { EventBus } from '../../shared/events.js';
import { databasesUnderTest } from '../helpers/db.js';
import { issueAccessToken } from '../helpers/grants.js';
import { startConsole } from './setup.js';

for (const kind of databasesUnderTest()) {
  test(`the console revoking a connection while the purge ends its expired grant: both succeed, one revocation record [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    // The purge of another instance: its own connections to the same database.
    const other = f.server.database.connect();
    try {
      const { db, config } = f.server.portico.context;
      const admin = await f.consoleToken('acmeAdmin', 'acme', ['console.connections.read', 'console.connections.write']);
      for (let round = 1; round <= 12; round += 1) {
        const { connection } = await issueAccessToken(db, {
          tenantId: f.tenants.acme, userId: f.users.ann, product: 'forge', resource: `${config.mcpUrl}/forge`, scopes: ['forge.chat.read'],
        });
        await db('oidc_payloads').where({ model: 'Grant', id: connection.grant_id }).update({ expires_at: Date.now() - 1000 });

        const [revoked, purged] = await Promise.allSettled([
          f.api(`/connections/${connection.id}`, admin, { method: 'DELETE' }),
          endExpiredGrants(other, new EventBus()),
        ]);
        t.is(purged.status, 'fulfilled', `round ${round}: the purge ${purged.status === 'rejected' ? String(purged.reason) : ''}`);
        const response = revoked.status === 'fulfilled' ? revoked.value : undefined;
        t.is(response?.status, 200, `round ${round}: the console answered ${response?.status} ${await response?.text()}`);
        const records = await db('audit_log').where({ connection_id: connection.id }).whereIn('name', ['connection.revoke', 'grant.revoke']);
        t.is(records.length, 1, `round ${round}: one revocation record`);
        t.truthy((await db('connections').where({ id: connection.id }).first()).revoked_at);
      }
    } finally {
      await other.destroy();
      await f.close();
    }
  });
}
