/**
 * AuditWriter on PostgreSQL when the connection is lost after PostgreSQL committed a batch's one
 * statement and before its answer came back. The statement moves only the chains whose head is
 * still the known one, so which records were written is asked of the log chain by chain: a
 * record on a chain another writer moved is written through the locked path (never reported
 * committed without being written), and one that was written is not written again.
 */
import test from 'ava';
import { AuditWriter, appendAudit, chainRows, verifyChain, type DbAuditRow } from '../../../db/audit.js';
import { auditPipeOf, type Db } from '../../../db/connect.js';
import { createTenant, createUser } from '../../../db/accounts.js';
import { createConnection } from '../../../db/grant_store.js';
import { createMigratedDatabase, databasesUnderTest } from '../../helpers/db.js';

const onPostgres = databasesUnderTest().includes('postgres') ? test : test.skip;

async function setup(db: Db) {
  const user = await createUser(db, { email: 'a@one.example', password: 'long-enough-password' });
  const tenants = await Promise.all(['aaa', 'bbb'].map((slug) => createTenant(db, { slug, name: slug })));
  const connections = await Promise.all(tenants.map((tenant, i) => createConnection(db, {
    grantId: `grant-${i}`, tenantId: tenant.id, userId: user.id, clientId: 'c', clientKind: 'dynamic', product: 'forge', resource: 'r', scopes: ['forge.chat.read'],
  })));
  return { tenants, connections };
}

/** The next audit statement on known heads commits, then its connection is "lost" before the answer. */
function loseAnswerOfNextStatement(db: Db): void {
  const pipe = auditPipeOf(db)! as unknown as { rows(sql: string, bindings: readonly unknown[]): Promise<unknown[]> };
  const real = pipe.rows.bind(pipe);
  let armed = true;
  pipe.rows = async (sql, bindings) => {
    const rows = await real(sql, bindings);
    if (armed && sql.includes('moved as (update audit_heads')) {
      armed = false;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return rows;
  };
}

for (const order of ['moved chain first', 'stale chain first'] as const) {
  onPostgres(`a batch whose answer was lost after commit: every record reported written is in the log, exactly once (${order}) [postgres]`, async (t) => {
    const database = await createMigratedDatabase('postgres');
    const { db } = database;
    try {
      const { tenants, connections } = await setup(db);
      const input = (n: number, i: string) => ({ tenantId: tenants[n].id, connectionId: connections[n].id, kind: 'tool' as const, name: 'forge.list_conversations', args: { i }, outcome: 'ok', touch: true });
      const writer = new AuditWriter(db);
      await Promise.all([writer.append(input(0, 'a-1')), writer.append(input(1, 'b-1'))]); // the writer knows both heads
      // A write tool's record, in its own transaction: chain 0's head is no longer the one the writer knows.
      await appendAudit(db, { tenantId: tenants[0].id, kind: 'tool', name: 'forge.delete_conversation', outcome: 'ok', args: { i: 'a-tx' } });

      loseAnswerOfNextStatement(db);
      const batch = order === 'moved chain first' ? [input(1, 'b-2'), input(0, 'a-2')] : [input(0, 'a-2'), input(1, 'b-2')];
      const settled = await Promise.allSettled(batch.map((i) => writer.append(i)));
      await writer.flush();

      for (const [n, tenant] of tenants.entries()) {
        const rows: DbAuditRow[] = [];
        for await (const row of chainRows(db, tenant.id)) rows.push(row);
        t.true((await verifyChain(rows)).ok);
        const args = rows.map((r) => JSON.parse(r.args_redacted!).i);
        const expected = n === 0 ? ['a-1', 'a-tx', 'a-2'] : ['b-1', 'b-2'];
        for (const [k, outcome] of settled.entries()) {
          if (outcome.status !== 'fulfilled' || batch[k].tenantId !== tenant.id) continue;
          t.true(rows.some((r) => r.id === outcome.value.id), `the record ${batch[k].args.i} reported written is in the log (chain ${n}: ${JSON.stringify(args)})`);
        }
        t.deepEqual(args.filter((i) => i === expected.at(-1)).length <= 1, true, `no record twice (chain ${n}: ${JSON.stringify(args)})`);
      }
    } finally {
      await database.drop();
    }
  });
}
