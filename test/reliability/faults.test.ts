/**
 * Fault injection (checklist R1-R4, R6-R8, J3-J4) against a real server and a real database:
 * the database goes away in the middle of a call, a lock is held past the busy time-out, the
 * connection is revoked while its call runs, a token expires by the server's clock. Invariants:
 * the call fails closed with a stable code, nothing takes effect without its audit record, the
 * server keeps serving and recovers.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { chainRows, verifyChain } from '../../db/audit.js';
import { revokeConnection } from '../../db/grant_store.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { auditOf, grant, openSession, rawCall, rawPost } from '../helpers/mcp.js';
import { gate, startFaultServer, type FaultServer } from './support.js';

const WRITE = ['faultlab.markers.write'];

function writeMarker(server: FaultServer, token: string, sessionId: string, name: string, id = 1) {
  return rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name } }, { sessionId, id });
}

/**
 * A faultlab write held at its gate: a grant and session on `server`, and the call to write
 * `marker`, started and waiting inside its handler until `door.release()`.
 */
async function heldWrite(server: FaultServer, marker: string, id = 1) {
  const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: WRITE });
  const sessionId = await openSession(server, token, 'faultlab');
  const door = gate(marker);
  const call = writeMarker(server, token, sessionId, marker, id);
  await door.entered;
  return { token, connection, sessionId, door, call };
}

/** The code a call ended with: its tool result's, its JSON-RPC error's, or "no answer" if the stream closed empty. */
function codeOf(response: Awaited<ReturnType<typeof writeMarker>>): string {
  const body = response.body;
  if (body?.result) return body.result.isError ? body.result.structuredContent?.code : 'ok';
  return body?.error?.data?.code ?? 'no answer';
}

async function chainIntact(server: FaultServer, t: { true(v: boolean, m?: string): void }) {
  const verdict = await verifyChain(chainRows(server.db, server.tenants.acme.id));
  t.true(verdict.ok, `acme's audit chain verifies: ${JSON.stringify(verdict)}`);
}

for (const kind of databasesUnderTest()) {
  test(`revoked while its call runs: the result is not delivered and nothing is written [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection, sessionId, door, call } = await heldWrite(server, 'during-revocation');
      // Revoked from elsewhere (the console of another instance, the admin CLI): on SQLite the call's
      // transaction holds this instance's only pooled connection until the call ends.
      const elsewhere = server.database.connect();
      await elsewhere.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' })).finally(() => elsewhere.destroy());
      await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
      door.release();
      const response = await call;
      t.not(codeOf(response), 'ok', `after revocation the call must not succeed: ${response.text.slice(0, 300)}`);
      t.deepEqual(await server.markers('during-revocation'), [], 'its effect did not persist');
      const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
      t.false(records.some((r) => r.outcome === 'ok'), JSON.stringify(records.map((r) => r.outcome)));
      const after = await writeMarker(server, token, sessionId, 'after-revocation');
      t.is(after.status, 401);
      await chainIntact(server, t);
    } finally {
      await server.close();
    }
  });

  test(`a token is checked against the server's clock: expired is refused, however the client's clock reads [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: WRITE, ttlSeconds: 5 });
      const sessionId = await openSession(server, token, 'faultlab');
      t.is(codeOf(await writeMarker(server, token, sessionId, 'in-time')), 'ok');
      // Wait until the server's clock passes exp; a client claiming an earlier time changes nothing.
      const exp = JSON.parse((await server.db('oidc_payloads').where({ model: 'AccessToken' }).first()).payload).exp * 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp - Date.now()) + 200));
      const late = await rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: 'too-late' } }, {
        sessionId, headers: { date: new Date(exp - 60_000).toUTCString() },
      });
      t.is(late.status, 401);
      t.is(late.body.error.data.code, 'invalid_token');
      t.regex(late.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      t.deepEqual(await server.markers('too-late'), []);
      const expired = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: WRITE, ttlSeconds: -1 });
      t.is((await rawCall(server, expired.token, 'faultlab', 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } })).status, 401, 'a token born expired');
    } finally {
      await server.close();
    }
  });
}

if (databasesUnderTest().includes('postgres')) {
  test('PostgreSQL: the server’s connections are terminated mid-call and while idle; the call fails closed and the server recovers [postgres]', async (t) => {
    const app = `portico_fault_${randomBytes(4).toString('hex')}`;
    const base = await createTestDatabase('postgres');
    const url = new URL(base.url);
    url.searchParams.set('application_name', app);
    const database = { ...base, url: url.href };
    const server = await startFaultServer('postgres', { database });
    const admin = base.connect();
    const terminate = async () =>
      Number((await admin.raw('select count(pg_terminate_backend(pid)) as n from pg_stat_activity where application_name = ? and pid <> pg_backend_pid()', [app])).rows[0].n);
    try {
      const { token, connection, sessionId, door, call } = await heldWrite(server, 'mid-call');
      t.true((await terminate()) >= 1, 'the call’s own connection was among those killed');
      door.release();
      const response = await call;
      t.true(['unavailable', 'internal'].includes(codeOf(response)), `fails closed with a stable code: ${response.text.slice(0, 300)}`);
      t.is(codeOf(response), 'unavailable', 'a lost database is reported as unavailable (retryable), not as an internal error');
      t.is(response.body.error.message, 'the database is unavailable; nothing was changed, try again');
      // Read through a pool of the test's own: the server's idle connections were terminated too,
      // and one whose end node-postgres has not yet been told of could be handed to the query.
      t.deepEqual(await admin('faultlab_markers').where({ name: 'mid-call' }).select('name'), [], 'the effect died with its transaction');
      const records = await auditOf({ ...server, db: admin }, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
      // DESIGN.md §6: the failure is audited after the rollback when the database allows it; here the
      // pool's other connections died too, so the record may be missing. Never an ok without its effect.
      t.true(records.every((r) => r.outcome === 'unavailable'), JSON.stringify(records.map((r) => r.outcome)));

      // Killed while idle: the pool's idle clients die; the process must not crash (node-postgres 'error' on idle clients).
      t.true((await terminate()) >= 0);
      await new Promise((resolve) => setTimeout(resolve, 200)); // nothing to wait for: their errors, had they been unhandled, would have crashed it by now
      t.is((await fetch(`${server.url}/healthz`)).status, 200, 'the process is alive');
      const recovered = await writeMarker(server, token, sessionId, 'recovered', 2);
      t.is(codeOf(recovered), 'ok', recovered.text.slice(0, 300));
      t.is((await server.markers('recovered')).length, 1);
      t.is((await auditOf(server, 'acme', { connection_id: connection.id, outcome: 'ok' })).length, 1);
      await chainIntact(server, t);
    } finally {
      await admin.destroy();
      await server.close();
      await base.drop();
    }
  });
}

if (databasesUnderTest().includes('postgres')) {
  test('PostgreSQL: a table locked by a busy session holds calls no longer than lock_timeout (the idle-in-transaction time-out and 1 s); they answer 503 unavailable, /readyz says so, and all recovers [postgres]', async (t) => {
    // lock_timeout 2 s
    const server = await startFaultServer('postgres', { env: { TOOL_TIMEOUT_MS: '800', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1000' } });
    const admin = server.database.connect();
    let held: (() => Promise<void>) | undefined;
    /** Holds an ACCESS EXCLUSIVE lock on `table` (as a migration or a manual LOCK would) until released. */
    const lock = async (table: string) => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const done = admin.transaction(async (trx) => {
        await trx.raw(`lock table ${table} in access exclusive mode`);
        locked();
        await released;
      });
      await isLocked;
      held = async () => {
        held = undefined;
        release();
        await done;
      };
      return held;
    };
    try {
      const { token, sessionId } = await heldWrite(server, 'warm-up').then(async ({ door, call, token, sessionId }) => {
        door.release();
        await call;
        return { token, sessionId };
      });

      // The audit log locked: a write's record cannot be written, so the call fails, in bounded time, and its effect is gone.
      let unlock = await lock('audit_log');
      let started = performance.now();
      const write = await writeMarker(server, token, sessionId, 'while-locked', 3);
      t.is(codeOf(write), 'unavailable', write.text.slice(0, 300));
      t.true(performance.now() - started < 6_000, `answered in ${Math.round(performance.now() - started)} ms`);
      const ready = await fetch(`${server.url}/readyz`);
      t.is(ready.status, 200, 'audit_heads is not locked: ready');
      await unlock();
      t.deepEqual(await server.markers('while-locked'), [], 'the effect died with its transaction');

      // The token store locked: a token not yet cached is checked against it; 503, not 500.
      unlock = await lock('oidc_payloads');
      started = performance.now();
      const refused = await rawCall(server, 'an-unknown-token-that-is-looked-up', 'faultlab', 'tools/list', {});
      t.is(refused.status, 503, refused.text.slice(0, 300));
      t.is(refused.body.error.data.code, 'unavailable');
      t.true(performance.now() - started < 6_000);
      await unlock();

      // The audit heads locked: /readyz answers 503 within its deadline.
      unlock = await lock('audit_heads');
      started = performance.now();
      const notReady = await fetch(`${server.url}/readyz`);
      const reason = await notReady.text();
      t.is(notReady.status, 503, reason);
      t.regex(reason, /database unreachable|did not answer within/);
      t.true(performance.now() - started < 4_000);
      await unlock();

      t.is((await fetch(`${server.url}/readyz`)).status, 200);
      const recovered = await writeMarker(server, token, sessionId, 'after-locks', 4);
      t.is(codeOf(recovered), 'ok', recovered.text.slice(0, 300));
      await chainIntact(server, t);
    } finally {
      await held?.();
      await admin.destroy();
      await server.close();
    }
  });
}

test('SQLite: a write lock held by another connection beyond busy_timeout fails the call closed; it works again once the lock is gone [sqlite]', async (t) => {
  t.timeout(60_000);
  const server = await startFaultServer('sqlite');
  const other = server.database.connect();
  try {
    const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: WRITE });
    const sessionId = await openSession(server, token, 'faultlab');
    await other.raw('BEGIN IMMEDIATE');
    const blocked = await writeMarker(server, token, sessionId, 'locked-out');
    t.true(['unavailable', 'internal'].includes(codeOf(blocked)), blocked.text.slice(0, 300));
    t.is(codeOf(blocked), 'unavailable', 'a busy database is reported as unavailable (retryable)');
    t.is(blocked.body.error.message, 'the database is unavailable; nothing was changed, try again', 'the message says so; the driver\'s text stays in the log');
    t.is((await fetch(`${server.url}/healthz`)).status, 200, 'still serving');
    await other.raw('COMMIT');
    t.deepEqual(await server.markers('locked-out'), [], 'no effect');
    t.false((await auditOf(server, 'acme', { connection_id: connection.id })).some((r) => r.outcome === 'ok'), 'no ok record');
    const recovered = await writeMarker(server, token, sessionId, 'after-lock', 2);
    t.is(codeOf(recovered), 'ok');
    t.is((await server.markers('after-lock')).length, 1);
    await chainIntact(server, t);
  } finally {
    await other.destroy();
    await server.close();
  }
});

for (const kind of databasesUnderTest()) {
  test(`a call past TOOL_TIMEOUT_MS fails as timeout, its handler's signal aborted, and writes nothing [${kind}]`, async (t) => {
    // Long enough that, on a loaded machine, the held call is still running when heldWrite returns
    // and the write after it finishes in time.
    const server = await startFaultServer(kind, { env: { TOOL_TIMEOUT_MS: '1000' } });
    try {
      const { token, connection, sessionId, door, call } = await heldWrite(server, 'too-slow');
      t.false(door.signal!.aborted, 'not before the time-out');
      const response = await call;
      t.is(codeOf(response), 'timeout', response.text.slice(0, 300));
      // Our own 5xx text, which says what happened and that nothing changed (docs/errors.md); no internals.
      t.is(response.body.error.message, 'the call took longer than 1000 ms and was stopped; nothing was changed');
      t.true(door.signal!.aborted, "the handler's signal tells it to stop");
      door.release(); // the handler goes on, into a transaction that has ended
      t.deepEqual(await server.markers('too-slow'), []);
      const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
      t.deepEqual(records.map((r) => r.outcome), ['timeout']);
      t.is(codeOf(await writeMarker(server, token, sessionId, 'in-time', 2)), 'ok', 'the server keeps serving');
      await chainIntact(server, t);
    } finally {
      await server.close();
    }
  });

  test(`notifications/cancelled stops the call it names: its handler's signal aborts and nothing is written [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection, sessionId, door, call } = await heldWrite(server, 'cancelled', 7);
      const sent = Date.now();
      const note = await rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'the person changed their mind' } }) });
      t.is(note.status, 202);
      const response = await call;
      t.true(Date.now() - sent < server.config.toolTimeoutMs / 2, 'ended by the cancellation, long before the time-out');
      t.true(door.signal!.aborted, "the handler's signal tells it to stop");
      t.is(codeOf(response), 'timeout', response.text.slice(0, 300));
      door.release();
      t.deepEqual(await server.markers('cancelled'), []);
      const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
      t.deepEqual(records.map((r) => r.outcome), ['timeout']);
      await chainIntact(server, t);
    } finally {
      await server.close();
    }
  });

  test(`only a notification the SDK accepts cancels: one with an id, another member or a reason that is not text leaves the call running [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection, sessionId, door, call } = await heldWrite(server, 'not-cancelled', 7);
      const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } };
      // What the SDK makes of each: a request it has no method for (-32601), a message its transport refuses, a notification its handler refuses.
      const notCancellations: Array<[string, Record<string, unknown>, number]> = [
        ['a request of that name', { ...cancel, id: 99 }, 200],
        ['another member', { ...cancel, junk: 1 }, 400],
        ['a reason that is not text', { ...cancel, params: { requestId: 7, reason: 5 } }, 202],
      ];
      for (const [label, message, status] of notCancellations) {
        const response = await rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify(message) }, 99);
        t.is(response.status, status, `${label}: ${response.text.slice(0, 300)}`);
        t.false(door.signal!.aborted, `${label}: the call goes on`);
      }
      door.release();
      const response = await call;
      t.is(codeOf(response), 'ok', response.text.slice(0, 300));
      t.is((await server.markers('not-cancelled')).length, 1);
      const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
      t.deepEqual(records.map((r) => r.outcome), ['ok']);
    } finally {
      await server.close();
    }
  });
}

const onPostgres = databasesUnderTest().includes('postgres') ? test : test.skip;

onPostgres(`a read PostgreSQL cancels past DATABASE_READ_TIMEOUT_MS fails its call as timeout, audited once, and the next read is served [postgres]`, async (t) => {
  const server = await startFaultServer('postgres', { env: { DATABASE_READ_TIMEOUT_MS: '1000' } });
  try {
    const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write', 'faultlab.markers.read'] });
    const sessionId = await openSession(server, token, 'faultlab');
    t.is(codeOf(await writeMarker(server, token, sessionId, 'there')), 'ok');
    const read = (seconds: number, id: number) => rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.slow_read', arguments: { seconds } }, { sessionId, id });
    const started = Date.now();
    const slow = await read(5, 2);
    t.is(codeOf(slow), 'timeout', slow.text.slice(0, 300));
    t.is(slow.body.error.message, 'the database took too long to answer; nothing was changed');
    t.true(Date.now() - started < 4_000, 'cancelled by PostgreSQL, not waited out');
    const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.slow_read' });
    t.deepEqual(records.map((r) => r.outcome), ['timeout']);
    t.is(codeOf(await read(0, 3)), 'ok', 'the read pipe serves the next read');
    await chainIntact(server, t);
  } finally {
    await server.close();
  }
});
