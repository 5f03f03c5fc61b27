/**
 * Group commit of audit records (db/audit.ts AuditWriter, docs/performance.md): many calls'
 * records in one transaction must lose none, keep every tenant's chain intact, and count every
 * use of a connection, also when two instances (two pools on one database) write at once.
 */
import test from 'ava';
import { AuditWriter, appendAudit, chainRows, verifyChain, type DbAuditRow } from '../../db/audit.js';
import { createTenant, createUser } from '../../db/accounts.js';
import { createConnection, revokeConnection } from '../../db/grant_store.js';
import { createMigratedDatabase, databasesUnderTest, testOnEachDatabase } from '../helpers/db.js';
import type { Db } from '../../db/connect.js';
import { grant, mcpTest, MCP_HEADERS, openSession, auditOf } from '../helpers/mcp.js';
import { intactChain } from '../helpers/audit.js';

/** Tenant "one" with one forge connection of one user. */
async function tenantWithConnection(db: Db) {
  const tenant = await createTenant(db, { slug: 'one', name: 'one' });
  const user = await createUser(db, { email: 'a@one.example', password: 'long-enough-password' });
  const connection = await createConnection(db, {
    grantId: 'grant-1', tenantId: tenant.id, userId: user.id, clientId: 'c', clientKind: 'dynamic', product: 'forge', resource: 'r', scopes: ['forge.chat.read'],
  });
  return { tenant, connection };
}

testOnEachDatabase('two writers group-commit 400 records over three chains: none lost, chains verify, uses counted', async (t, database) => {
  const { db } = database;
  const other = database.connect(); // a second instance's pool
  try {
    const tenants = await Promise.all(['one', 'two', 'three'].map((slug) => createTenant(db, { slug, name: slug })));
    const user = await createUser(db, { email: 'a@one.example', password: 'long-enough-password' });
    const connections = await Promise.all(tenants.map((tenant, i) => createConnection(db, {
      grantId: `grant-${i}`, tenantId: tenant.id, userId: user.id, clientId: 'c', clientKind: 'dynamic', product: 'forge', resource: 'r', scopes: ['forge.chat.read'],
    })));
    const writers = [new AuditWriter(db), new AuditWriter(other)];
    const appended = await Promise.all(Array.from({ length: 400 }, (_, i) => {
      const n = i % 3;
      // Some records through the one-at-a-time path too, interleaved with the batches.
      const input = { tenantId: tenants[n].id, connectionId: connections[n].id, kind: 'tool' as const, name: 'forge.list_conversations', args: { i }, outcome: 'ok', touch: true };
      return i % 10 === 9 ? appendAudit(db, input).then(async (row) => {
        await db('connections').where({ id: connections[n].id }).increment('call_count', 1);
        return row;
      }) : writers[i % 2].append(input);
    }));
    t.is(new Set(appended.map((r) => r.id)).size, 400);
    for (const [n, tenant] of tenants.entries()) {
      const rows: DbAuditRow[] = [];
      for await (const row of chainRows(db, tenant.id)) rows.push(row);
      const expected = Array.from({ length: 400 }, (_, i) => i).filter((i) => i % 3 === n);
      t.deepEqual(rows.map((r) => JSON.parse(r.args_redacted!).i).sort((a, b) => a - b), expected);
      t.deepEqual(await verifyChain(rows), intactChain(rows));
      const connection = await db('connections').where({ id: connections[n].id }).first();
      t.is(Number(connection.call_count), expected.length);
      t.truthy(connection.last_used_at);
    }
  } finally {
    await other.destroy();
  }
});

testOnEachDatabase('a writer appends on the head it knows; a head moved by another writer sends the batch through the head lock', async (t, database) => {
  const { db, kind } = database;
  const other = database.connect(); // a second instance's pool
  try {
    const { tenant, connection } = await tenantWithConnection(db);
    const writer = new AuditWriter(db);
    const statements: string[] = [];
    db.on('query', (query: { sql: string }) => statements.push(query.sql));
    let n = 0;
    const round = async (w: AuditWriter, size: number) => {
      statements.length = 0;
      await Promise.all(Array.from({ length: size }, () => w.append({ tenantId: tenant.id, connectionId: connection.id, kind: 'tool', name: 'forge.list_conversations', args: { i: n++ }, outcome: 'ok', touch: true })));
      return { locked: statements.some((sql) => sql.startsWith('insert into audit_heads')), swapped: statements.some((sql) => sql.includes('moved as (update audit_heads')) };
    };
    const postgres = kind === 'postgres';

    t.deepEqual(await round(writer, 3), { locked: true, swapped: false }, 'a head not known yet is read under its lock');
    t.deepEqual(await round(writer, 3), { locked: !postgres, swapped: postgres }, 'the known head: one statement on PostgreSQL');
    await appendAudit(db, { tenantId: tenant.id, kind: 'admin', name: 'console.something', outcome: 'ok', args: { i: n++ } });
    t.deepEqual(await round(writer, 2), { locked: true, swapped: postgres }, 'moved by a record written in a transaction: tried, then locked');
    t.deepEqual(await round(writer, 2), { locked: !postgres, swapped: postgres });
    await round(new AuditWriter(other), 2);
    t.deepEqual(await round(writer, 4), { locked: true, swapped: postgres }, 'moved by another instance: tried, then locked');

    const rows: DbAuditRow[] = [];
    for await (const row of chainRows(db, tenant.id)) rows.push(row);
    t.deepEqual(rows.map((r) => JSON.parse(r.args_redacted!).i), Array.from({ length: n }, (_, i) => i));
    t.deepEqual(await verifyChain(rows), intactChain(rows));
    // Every record that touched counted once, the one written in a transaction not at all.
    t.is(Number((await db('connections').where({ id: connection.id }).first()).call_count), n - 1);
  } finally {
    await other.destroy();
  }
});

testOnEachDatabase('two instances writing one chain in rounds, three connections, one revoked meanwhile: every record once, one unbroken chain, every use counted once', async (t, database) => {
  const { db } = database;
  const other = database.connect();
  try {
    const tenant = await createTenant(db, { slug: 'one', name: 'one' });
    const user = await createUser(db, { email: 'a@one.example', password: 'long-enough-password' });
    const connections = await Promise.all(['grant-1', 'grant-2', 'grant-3'].map((grantId) => createConnection(db, {
      grantId, tenantId: tenant.id, userId: user.id, clientId: 'c', clientKind: 'dynamic', product: 'forge', resource: 'r', scopes: ['forge.chat.read'],
    })));
    const writers = [new AuditWriter(db), new AuditWriter(other)];
    const uses = [0, 0, 0];
    let usesBeforeRevocation = 0;
    let n = 0;
    for (let round = 0; round < 15; round++) {
      if (round === 7) usesBeforeRevocation = uses[2];
      // In round 7 a revocation (connection row, then chain head, in one transaction) races the batches that count that connection's uses.
      const revoking = round === 7 ? other.transaction((trx) => revokeConnection(trx, connections[2], { reason: 'test' })) : undefined;
      await Promise.all([revoking, ...Array.from({ length: 1 + (round % 4) * 3 }, (_, i) => {
        const k = (round + i) % 3;
        uses[k] += 1;
        return writers[(round + i) % 2].append({ tenantId: tenant.id, connectionId: connections[k].id, kind: 'tool', name: 'forge.list_conversations', args: { i: n++ }, outcome: 'ok', touch: true });
      })]);
    }
    const rows: DbAuditRow[] = [];
    for await (const row of chainRows(db, tenant.id)) rows.push(row);
    t.deepEqual(rows.filter((r) => r.kind === 'tool').map((r) => JSON.parse(r.args_redacted!).i).sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
    t.deepEqual(rows.filter((r) => r.kind !== 'tool').map((r) => r.name), ['connection.revoke']);
    t.deepEqual(await verifyChain(rows), intactChain(rows));
    for (const [k, connection] of connections.slice(0, 2).entries()) {
      t.is(Number((await db('connections').where({ id: connection.id }).first()).call_count), uses[k], `connection ${k}`);
    }
    // A revoked connection's uses stop at its revocation (db/audit.ts countUses): those counted before it, once each.
    const revoked = await db('connections').where({ id: connections[2].id }).first();
    t.truthy(revoked.revoked_at);
    t.true(Number(revoked.call_count) >= usesBeforeRevocation && Number(revoked.call_count) <= uses[2], `connection 2: ${revoked.call_count} of ${usesBeforeRevocation}-${uses[2]}`);
  } finally {
    await other.destroy();
  }
});

testOnEachDatabase('on the known head, one statement counts the uses of every connection in the batch', async (t, database) => {
  const { db, kind } = database;
  const tenant = await createTenant(db, { slug: 'one', name: 'one' });
  const user = await createUser(db, { email: 'a@one.example', password: 'long-enough-password' });
  const connections = await Promise.all(['grant-1', 'grant-2', 'grant-3'].map((grantId) => createConnection(db, {
    grantId, tenantId: tenant.id, userId: user.id, clientId: 'c', clientKind: 'dynamic', product: 'forge', resource: 'r', scopes: ['forge.chat.read'],
  })));
  const writer = new AuditWriter(db);
  const append = (k: number, at: number) => writer.append({ tenantId: tenant.id, connectionId: connections[k].id, kind: 'tool', name: 'forge.list_conversations', outcome: 'ok', touch: true, time: at });
  await append(0, 1_000); // the writer learns the head
  const statements: string[] = [];
  db.on('query', (query: { sql: string }) => statements.push(query.sql));
  await Promise.all([append(0, 2_000), append(1, 3_000), append(1, 4_000), append(2, 5_000), append(2, 6_000), append(2, 7_000)]);
  if (kind === 'postgres') {
    t.is(statements.length, 1, 'uses, head and records in one statement');
    t.true(statements[0].includes('update connections'));
  }
  const rows = await db('connections').whereIn('id', connections.map((c) => c.id)).select('id', 'call_count', 'last_used_at');
  const byId = new Map(rows.map((r) => [r.id, { calls: Number(r.call_count), last: Number(r.last_used_at) }]));
  t.deepEqual(connections.map((c) => byId.get(c.id)), [{ calls: 2, last: 2_000 }, { calls: 2, last: 4_000 }, { calls: 3, last: 7_000 }]);
  const chain: DbAuditRow[] = [];
  for await (const row of chainRows(db, tenant.id)) chain.push(row);
  t.deepEqual(await verifyChain(chain), intactChain(chain));
});

testOnEachDatabase('one batch over several tenants on known heads is one statement; a tenant whose head another writer moved comes back alone through its head lock', async (t, database) => {
  const { db, kind } = database;
  const other = database.connect(); // a second instance's pool
  try {
    const tenants = await Promise.all(['one', 'two', 'three', 'four'].map((slug) => createTenant(db, { slug, name: slug })));
    const user = await createUser(db, { email: 'a@one.example', password: 'long-enough-password' });
    const connections = await Promise.all(tenants.map((tenant, i) => createConnection(db, {
      grantId: `grant-${i}`, tenantId: tenant.id, userId: user.id, clientId: 'c', clientKind: 'dynamic', product: 'forge', resource: 'r', scopes: ['forge.chat.read'],
    })));
    const writer = new AuditWriter(db);
    const names = new Map(tenants.map((tenant) => [tenant.id, [] as string[]]));
    const append = (n: number, name: string, w = writer) => {
      names.get(tenants[n].id)!.push(name);
      return w.append({ tenantId: tenants[n].id, connectionId: connections[n].id, kind: 'tool', name, outcome: 'ok', touch: true });
    };
    await Promise.all(tenants.map((_, n) => append(n, `learn.${n}`))); // the writer learns every head
    const statements: string[] = [];
    db.on('query', (query: { sql: string }) => statements.push(query.sql));
    await Promise.all(tenants.flatMap((_, n) => [append(n, `a.${n}`), append(n, `b.${n}`)]));
    if (kind === 'postgres') t.deepEqual(statements.map((sql) => sql.includes('moved as (update audit_heads')), [true], 'eight records of four tenants: one statement');

    await append(2, 'moved.by.other', new AuditWriter(other)); // tenant three's head moves behind the writer's back
    statements.length = 0;
    await Promise.all(tenants.flatMap((_, n) => [append(n, `c.${n}`), append(n, `d.${n}`)]));
    if (kind === 'postgres') {
      t.is(statements.filter((sql) => sql.includes('moved as (update audit_heads')).length, 1, 'tried in one statement');
      t.true(statements.some((sql) => sql.startsWith('insert into audit_heads')), 'then tenant three alone through its head lock');
    }

    for (const [n, tenant] of tenants.entries()) {
      const rows: DbAuditRow[] = [];
      for await (const row of chainRows(db, tenant.id)) rows.push(row);
      t.deepEqual(rows.map((r) => r.name), names.get(tenant.id), `tenant ${n + 1}: every record once, in order`);
      t.deepEqual(await verifyChain(rows), intactChain(rows));
      t.is(Number((await db('connections').where({ id: connections[n].id }).first()).call_count), names.get(tenant.id)!.length, `tenant ${n + 1}: every use counted once`);
    }
  } finally {
    await other.destroy();
  }
});

testOnEachDatabase('a batch that fails is retried record by record: only the bad record fails', async (t, { db }) => {
  const tenant = await createTenant(db, { slug: 'one', name: 'one' });
  const writer = new AuditWriter(db);
  // The writer knows the chain's head first, so on PostgreSQL the batch takes the one-statement path before its retries.
  await writer.append({ tenantId: tenant.id, kind: 'tool', name: 'good.first', outcome: 'ok' });
  const good = Array.from({ length: 5 }, (_, i) => writer.append({ tenantId: tenant.id, kind: 'tool', name: `good.${i}`, outcome: 'ok' }));
  // A name longer than the column allows on PostgreSQL, an outcome of the wrong type on SQLite's strict check: either way the insert fails.
  const bad = writer.append({ tenantId: tenant.id, kind: 'tool', name: 'x'.repeat(300), outcome: null as unknown as string });
  const results = await Promise.allSettled([...good, bad]);
  t.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
  const rows: DbAuditRow[] = [];
  for await (const row of chainRows(db, tenant.id)) rows.push(row);
  t.deepEqual(rows.map((r) => r.name), ['good.first', 'good.0', 'good.1', 'good.2', 'good.3', 'good.4']);
  t.true((await verifyChain(rows)).ok);
});

mcpTest('200 concurrent read calls on one session: one durable record each, chain intact, uses counted', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const headers = { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
  const replies = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
    const response = await fetch(`${server.mcpUrl}/forge`, {
      method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: { limit: 1 + (i % 5) } } }),
    });
    const text = await response.text();
    // The reply is sent only after the call's record is committed: it must be readable now.
    const requestId = response.headers.get('x-request-id');
    const record = await server.db('audit_log').where({ request_id: requestId }).first();
    return { status: response.status, ok: text.includes('"result"') && !text.includes('"isError":true'), recorded: record?.outcome };
  }));
  t.true(replies.every((r) => r.status === 200 && r.ok && r.recorded === 'ok'));
  const rows = await auditOf(server, 'acme', { connection_id: connection.id, name: 'forge.list_conversations' });
  t.is(rows.length, 200);
  const chain: DbAuditRow[] = [];
  for await (const row of chainRows(server.db, server.tenants.acme.id)) chain.push(row);
  t.true((await verifyChain(chain)).ok);
  const after = await server.db('connections').where({ id: connection.id }).first();
  t.is(Number(after.call_count), 200);
});

testOnEachDatabase('records appended up to two turns of the event loop apart share one batch; one appended after it was written starts the next', async (t, { db }) => {
  const tenant = await createTenant(db, { slug: 'one', name: 'one' });
  const writer = new AuditWriter(db);
  const append = (i: number) => writer.append({ tenantId: tenant.id, kind: 'tool', name: 'forge.list_conversations', args: { i }, outcome: 'ok' });
  await append(0); // the chain exists, and on PostgreSQL the writer knows its head
  // Every batch moves the chain's head once (the head update, or on PostgreSQL the one statement that also inserts).
  let batches = 0;
  db.on('query', (query: { sql: string }) => {
    if (query.sql.includes('update audit_heads')) batches += 1;
  });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const first = append(1);
  await turn();
  const second = append(2);
  await turn();
  const third = append(3);
  await Promise.all([first, second, third]);
  t.is(batches, 1, 'three records, two turns apart, in one batch');
  await append(4);
  t.is(batches, 2);
  const chain: DbAuditRow[] = [];
  for await (const row of chainRows(db, tenant.id)) chain.push(row);
  t.deepEqual(chain.map((row) => JSON.parse(row.args_redacted!).i), [0, 1, 2, 3, 4]);
  t.deepEqual(await verifyChain(chain), intactChain(chain));
});

/**
 * PostgreSQL: one batch is written while the one before it still commits (AuditWriter.next, the
 * audit pipe). `held` keeps the first batch's statement waiting on its connection row's lock,
 * taken by another transaction, so what happens meanwhile can be seen.
 */
async function pipelined(run: (setup: { db: Db; append: (name: string) => Promise<DbAuditRow>; held: (during: () => Promise<void>) => Promise<void>; appends: () => number; tenantId: string; connectionId: string }) => Promise<void>): Promise<void> {
  const database = await createMigratedDatabase('postgres');
  const { db } = database;
  const other = database.connect();
  try {
    const { tenant, connection } = await tenantWithConnection(db);
    const writer = new AuditWriter(db);
    const append = (name: string) => writer.append({ tenantId: tenant.id, connectionId: connection.id, kind: 'tool', name, outcome: 'ok', touch: true });
    await append('first'); // the writer knows the head
    let statements = 0;
    db.on('query', (query: { sql: string }) => {
      if (query.sql.includes('moved as (update audit_heads')) statements += 1;
    });
    const held = async (during: () => Promise<void>) => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const holder = other.transaction(async (trx) => {
        await trx('connections').where({ id: connection.id }).forUpdate().first();
        locked();
        await released;
      });
      await lockTaken;
      try {
        await during();
      } finally {
        release();
        await holder;
      }
    };
    await run({ db, append, held, appends: () => statements, tenantId: tenant.id, connectionId: connection.id });
  } finally {
    await other.destroy();
    await database.drop();
  }
}

/** Waits (up to 10 s) until `condition` holds; false if it never does. */
async function eventually(condition: () => boolean): Promise<boolean> {
  for (const deadline = Date.now() + 10_000; !condition(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() > deadline) return false;
  }
  return true;
}

/** `n` turns of the event loop: the writer gathers a batch for three. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

if (databasesUnderTest().includes('postgres')) {
  test('PostgreSQL: the next batch is written while the one before it commits, and runs right after it, in order [postgres]', (t) => pipelined(async ({ db, append, held, appends, tenantId, connectionId }) => {
    const done: string[] = [];
    const calls: Array<Promise<DbAuditRow>> = [];
    await held(async () => {
      calls.push(append('a1').then((row) => (done.push('a1'), row)));
      t.true(await eventually(() => appends() === 1), 'the first batch is written (and waits on the lock)');
      calls.push(append('b1').then((row) => (done.push('b1'), row)), append('b2').then((row) => (done.push('b2'), row)));
      t.true(await eventually(() => appends() === 2), 'the second batch is written behind the first, before the first committed');
      t.deepEqual(done, [], 'neither is acknowledged before its commit');
      calls.push(append('c1').then((row) => (done.push('c1'), row)));
      await turns(30);
      t.is(appends(), 2, 'a third waits: at most one batch behind the one committing');
    });
    await Promise.all(calls);
    t.deepEqual(done, ['a1', 'b1', 'b2', 'c1']);
    t.is(appends(), 3);
    const chain: DbAuditRow[] = [];
    for await (const row of chainRows(db, tenantId)) chain.push(row);
    t.deepEqual(chain.map((r) => r.name), ['first', 'a1', 'b1', 'b2', 'c1']);
    t.deepEqual(await verifyChain(chain), intactChain(chain));
    t.is(Number((await db('connections').where({ id: connectionId }).first()).call_count), 5);
  }));

  test('PostgreSQL: when a batch fails, the batch written behind it finds the head moved and is written through the head lock; every good record once, uses counted once [postgres]', (t) => pipelined(async ({ db, append, held, appends, tenantId, connectionId }) => {
    let calls: Array<Promise<DbAuditRow>> = [];
    await held(async () => {
      // The first batch holds a record PostgreSQL refuses (a name longer than its column): its statement fails as a whole.
      calls = [append('a1'), append('x'.repeat(300))];
      t.true(await eventually(() => appends() === 1));
      calls.push(append('b1'), append('b2'));
      t.true(await eventually(() => appends() === 2), 'the second batch is written behind the failing one');
    });
    const results = await Promise.allSettled(calls);
    t.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const chain: DbAuditRow[] = [];
    for await (const row of chainRows(db, tenantId)) chain.push(row);
    t.deepEqual(chain.map((r) => r.name), ['first', 'a1', 'b1', 'b2'], 'the failed batch\'s good record first, then the batch behind it');
    t.deepEqual(await verifyChain(chain), intactChain(chain));
    t.is(Number((await db('connections').where({ id: connectionId }).first()).call_count), 4, 'the refused record is not counted; the second batch\'s uses once');
  }));
}
