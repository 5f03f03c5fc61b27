/**
 * A call whose transaction committed on PostgreSQL but whose COMMIT answer was lost (the
 * connection reset right after it was sent): the call fails `unavailable`, and the pipeline then
 * records that failure. Its record takes the call's record id, so the record that did commit
 * stays the call's only one, and its use is counted once: on the group commit's transaction path
 * (a read tool), and in the call's own transaction (a write tool).
 */
import test from 'ava';
import { issueAccessToken } from '../../helpers/grants.js';
import { createMigratedDatabase, databasesUnderTest } from '../../helpers/db.js';
import { forgePipeline } from '../../helpers/pipeline.js';
import type { Db } from '../../../db/connect.js';
import type { AppError } from '../../../shared/errors.js';

const onPostgres = databasesUnderTest().includes('postgres') ? test : test.skip;

/**
 * The next COMMIT on `db`'s pooled connections is carried out, then its answer is "lost". Each
 * database's driver is a class of its own (db/pg_client.ts pgClient), its transactions' too.
 */
function loseAnswerOfNextCommit(db: Db): void {
  const client = (db.client as { constructor: { prototype: { _query(connection: unknown, obj: { sql?: string }): Promise<unknown> } } }).constructor.prototype;
  const real = client._query;
  let armed = true;
  client._query = async function (this: unknown, connection, obj) {
    const result = await real.call(this, connection, obj);
    if (armed && obj.sql === 'COMMIT;') {
      armed = false;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return result;
  };
}

const calls = [
  { tool: 'forge.list_conversations', args: {}, scope: 'forge.chat.read', committed: 'the group commit' },
  { tool: 'forge.create_conversation', args: { title: 'Lost answer' }, scope: 'forge.chat.write', committed: 'the call\'s transaction' },
];

for (const { tool, args, scope, committed } of calls) {
  onPostgres(`a COMMIT of ${committed} whose answer was lost: the call fails unavailable, with one record, its use counted once [postgres]`, async (t) => {
    const database = await createMigratedDatabase('postgres');
    const { db } = database;
    try {
      const { pipeline } = await forgePipeline(db, database.url);
      const tenant = await db('tenants').where({ slug: 'acme' }).first();
      const user = await db('users').where({ email: 'admin@acme.example' }).first();
      const { token } = await issueAccessToken(db, { tenantId: tenant.id, userId: user.id, product: 'forge', resource: pipeline.resourceOf('forge'), scopes: [scope] });
      const principal = await pipeline.authenticate(token, 'forge');

      loseAnswerOfNextCommit(db);
      const error = await t.throwsAsync<AppError>(pipeline.callTool('forge', principal, tool, args, { requestId: 'req-lost' }));
      t.is(error?.code, 'unavailable', 'the call cannot know its outcome: it fails as retryable');
      await pipeline.close();

      const records = await db('audit_log').where({ request_id: 'req-lost' }).select('outcome');
      t.deepEqual(records.map((r) => r.outcome), ['ok'], 'one record: the one that committed');
      const connection = await db('connections').where({ id: principal.connectionId }).first('call_count');
      t.is(Number(connection.call_count), 1, 'one use');
      if (tool === 'forge.create_conversation') t.is((await db('forge_conversations').where({ title: 'Lost answer' })).length, 1);
    } finally {
      await database.drop();
    }
  });
}
