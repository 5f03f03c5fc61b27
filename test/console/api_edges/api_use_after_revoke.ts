/**
 * The console API counts a use of its own connection (last used, call count) after the token
 * check. A revocation that commits between the two must leave the connection as it was when it
 * was revoked: the console never shows a connection used after its revocation (db/audit.ts
 * countUses). The revocation is put exactly there: on PostgreSQL a transaction of the test's own
 * revokes the row and holds it until the count waits for it; on SQLite (one writer) the revocation
 * is written through another connection just as the count's statement is issued.
 */
import test from 'ava';
import { Database } from '../../../db/sqlite_client.js';
import { databasesUnderTest, holdRow } from '../../helpers/db.js';
import { issueAccessToken } from '../../helpers/grants.js';
import { ALL_CONSOLE_SCOPES, startConsole } from '../setup.js';

const COUNT = /^update [`"]connections[`"] set [`"]last_used_at[`"]/;

for (const kind of databasesUnderTest()) {
  test(`a console API request whose connection is revoked between its token check and its use count does not count a use [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    const { db, config } = f.server.portico.context;
    const { database } = f.server;
    try {
      const { token, connection } = await issueAccessToken(db, {
        tenantId: f.tenants.acme, userId: f.users.acmeAdmin, product: 'console', resource: `${config.apiUrl}/mcp`, scopes: ALL_CONSOLE_SCOPES,
      });
      const revokedAt = Date.now();
      let counted = 0;
      let answer: Response;
      if (kind === 'postgres') {
        // Revoked and held: the token check reads the row as it was, the count waits for the commit.
        const other = database.connect();
        try {
          const held = await holdRow(other, 'connections', connection.id);
          await held.trx('connections').where({ id: connection.id }).update({ revoked_at: revokedAt });
          db.on('query', (query: { sql: string }) => void (COUNT.test(query.sql) && (counted += 1)));
          const request = f.api('/connections', token);
          t.true(await held.waiting(1), 'the request waits for the revoked row after its token check');
          await held.release();
          answer = await request;
        } finally {
          await other.destroy();
        }
      } else {
        if (database.config.kind !== 'sqlite') throw new Error('a SQLite database');
        const writer = new Database(database.config.filename);
        writer.pragma('busy_timeout = 5000');
        try {
          db.on('query', (query: { sql: string }) => {
            if (!COUNT.test(query.sql)) return;
            counted += 1;
            writer.prepare('update connections set revoked_at = ? where id = ?').run(revokedAt, connection.id);
          });
          answer = await f.api('/connections', token);
        } finally {
          writer.close();
        }
      }
      t.is(counted, 1, 'the use was counted after the token check');
      t.is(answer.status, 200, await answer.clone().text());
      const row = await db('connections').where({ id: connection.id }).first();
      t.is(Number(row.revoked_at), revokedAt);
      t.is(Number(row.call_count), 0, 'no use counted after the revocation');
      t.is(row.last_used_at, null, 'not shown as used after the revocation');
    } finally {
      await f.close();
    }
  });
}
