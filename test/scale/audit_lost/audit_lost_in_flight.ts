/**
 * AuditWriter on PostgreSQL when the audit pipe's connection is lost while a batch's statement
 * still waits inside PostgreSQL for a row lock (the connection's row, or the chain's head). The
 * backend does not notice its client is gone: the statement commits when the lock comes, after
 * the writer has asked the log, found nothing yet, and written the records again through the
 * transaction path, which queues behind it. Each call must still be in the log once, and its use
 * counted once (also when the statement, its head moved meanwhile, writes no record). The pipe
 * reaches PostgreSQL through a proxy the test cuts (a reset, or the pipe's own stall watchdog
 * giving the connection up).
 */
import test from 'ava';
import { AuditWriter, appendAudit, chainRows, verifyChain, type DbAuditRow } from '../../../db/audit.js';
import { auditPipeOf, connectDatabase, type Db } from '../../../db/connect.js';
import { createTenant, createUser } from '../../../db/accounts.js';
import { createConnection } from '../../../db/grant_store.js';
import { createTestDatabase, databasesUnderTest, holdRow, type HeldRow } from '../../helpers/db.js';
import { startPgProxy } from '../../helpers/pg_proxy.js';
import { until } from '../../helpers/poll.js';
import { intactChain } from '../../helpers/audit.js';

const onPostgres = databasesUnderTest().includes('postgres') ? test : test.skip;

/** The backend of the audit pipe's connection (pg learns it as the connection opens). */
function pipeBackend(db: Db): number {
  return (auditPipeOf(db) as unknown as { client: { processID: number } }).client.processID;
}

/**
 * Who holds which row while the statement waits: a transaction that only locks it, or a write
 * tool's, which also appends its record (the chain's head moves: the statement writes nothing).
 */
const holders = [
  { held: 'connection row', table: 'connections', movesHead: false },
  { held: 'chain head', table: 'audit_heads', movesHead: false },
  { held: 'connection row of a write that moves the head', table: 'connections', movesHead: true },
] as const;

for (const { held, table, movesHead } of holders) {
  onPostgres(`a batch statement still waiting for the ${held} when the pipe is lost: every call in the log once, its use counted once [postgres]`, async (t) => {
    t.timeout(60_000);
    const database = await createTestDatabase('postgres', { migrated: true });
    const proxy = await startPgProxy(process.env.TEST_DATABASE_URL!);
    const db = connectDatabase({ kind: 'postgres', url: proxy.url(database.url) });
    const direct = database.connect();
    let holder: HeldRow | undefined;
    try {
      const tenant = await createTenant(db, { slug: 'acme', name: 'Acme' });
      const user = await createUser(db, { email: 'a@acme.example', password: 'long-enough-password' });
      const connection = await createConnection(db, { grantId: 'g1', tenantId: tenant.id, userId: user.id, clientId: 'c', clientKind: 'dynamic', product: 'forge', resource: 'r', scopes: ['forge.chat.read'] });
      const writer = new AuditWriter(db);
      const append = (requestId: string) => writer.append({ tenantId: tenant.id, userId: user.id, connectionId: connection.id, product: 'forge', kind: 'tool', name: 'forge.list_conversations', args: {}, outcome: 'ok', requestId, touch: true });
      await append('req-first'); // the writer knows the chain's head: the next batches go on the pipe
      let statements = 0;
      db.on('query', (query: { sql: string }) => {
        if (query.sql.includes('moved as (update audit_heads')) statements += 1;
      });

      // Another session holds the row, as a transaction touching it does.
      holder = table === 'connections' ? await holdRow(direct, table, connection.id) : await holdRow(direct, table, tenant.id, 'chain');
      if (movesHead) await appendAudit(holder.trx, { tenantId: tenant.id, kind: 'tool', name: 'forge.create_conversation', outcome: 'ok', requestId: 'req-write' });
      const waitEvent = async (pid: number): Promise<string | null | undefined> =>
        (await direct.raw('select wait_event_type from pg_stat_activity where pid = ?', [pid])).rows[0]?.wait_event_type;

      const second = append('req-second');
      t.true(await until(10_000, async () => statements === 1 || undefined, 5), 'the batch is written on the pipe');
      const backend = pipeBackend(db);
      t.is(await until(10_000, async () => ((await waitEvent(backend)) === 'Lock' ? 'Lock' : undefined), 20), 'Lock', 'its statement waits for the lock');
      const carried = proxy.carried();
      const third = append('req-third');
      t.true(await until(10_000, async () => statements === 2 || undefined, 5), 'the next batch is written behind it');
      // ... and has reached the backend, which reads it once the first is done.
      t.true(await until(10_000, async () => proxy.carried() > carried || undefined, 5), 'the next batch reached PostgreSQL');

      t.true(proxy.cut() >= 1);
      // The writer asks the log, finds neither batch, and writes them again: its transaction queues behind the orphaned statement.
      t.true(await holder.waiting(2), 'the records written again wait behind the statement');
      t.is(await waitEvent(backend), 'Lock', 'the statement still waits, its client gone');
      await holder.release();

      const settled = await Promise.allSettled([second, third]);
      await writer.flush();
      t.true(await until(10_000, async () => ((await waitEvent(backend)) === undefined ? true : undefined), 20), 'the orphaned backend ends');

      const rows: DbAuditRow[] = [];
      for await (const row of chainRows(direct, tenant.id)) rows.push(row);
      t.deepEqual(rows.map((row) => row.request_id), ['req-first', ...(movesHead ? ['req-write'] : []), 'req-second', 'req-third'], 'each call once, in order');
      t.deepEqual(await verifyChain(rows), intactChain(rows));
      t.deepEqual(settled.map((s) => s.status), ['fulfilled', 'fulfilled'], 'both appends resolve: their records are durable');
      for (const outcome of settled) {
        if (outcome.status === 'fulfilled') t.true(rows.some((row) => row.id === outcome.value.id && row.request_id === outcome.value.request_id), 'the record an append resolves with is the one in the log');
      }
      t.is(Number((await direct('connections').where({ id: connection.id }).first('call_count')).call_count), 3, 'three calls, three uses');
    } finally {
      await holder?.release().catch(() => undefined);
      await db.destroy().catch(() => undefined);
      await direct.destroy();
      await proxy.close();
      await database.drop();
    }
  });
}
