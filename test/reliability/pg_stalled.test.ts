/**
 * PostgreSQL connections that stop answering without closing (a database host frozen or gone
 * behind a proxy, a flow a NAT or firewall silently dropped: no FIN, no RST). The instance gives
 * them up and recovers by itself once the database answers on new connections, as it does when
 * connections are closed outright (test/reliability/faults.test.ts). The server reaches PostgreSQL
 * through a TCP proxy the test controls (test/helpers/pg_proxy.ts).
 */import test from 'ava';
import { chainRows, verifyChain } from '../../db/audit.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { grant, openSession, rawCall } from '../helpers/mcp.js';
import { startFaultServer } from '../reliability/support.js';
import { startPgProxy } from '../helpers/pg_proxy.js';

function codeOf(response: { body: any; status: number }): string {
  const body = response.body;
  if (body?.result) return body.result.isError ? body.result.structuredContent?.code : 'ok';
  return body?.error?.data?.code ?? `no answer (${response.status})`;
}

/**
 * A fault-lab server that reaches PostgreSQL through a proxy the test controls, with short
 * time-outs: PostgreSQL cancels the read pipe's statements after 1 s and lock waits after 2.5 s.
 */
async function behindProxy() {
  const base = await createTestDatabase('postgres');
  const proxy = await startPgProxy(process.env.TEST_DATABASE_URL!);
  const server = await startFaultServer('postgres', {
    database: { ...base, url: proxy.url(base.url) },
    env: { DATABASE_READ_TIMEOUT_MS: '1000', TOOL_TIMEOUT_MS: '1000', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1500' },
  });
  return {
    base, proxy, server,
    async close() {
      proxy.cut();
      await server.close().catch(() => undefined);
      await proxy.close();
      await base.drop();
    },
  };
}

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;

pgTest('PostgreSQL: pipelined connections that stop answering are given up, and read tools work again on new ones [postgres]', async (t) => {
  t.timeout(120_000);
  const { base, proxy, server, ...lab } = await behindProxy();
  const direct = base.connect();
  try {
    const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write', 'faultlab.markers.read'] });
    const sessionId = await openSession(server, token, 'faultlab');
    let id = 1;
    const call = (name: string, args: Record<string, unknown>) =>
      rawCall(server, token, 'faultlab', 'tools/call', { name, arguments: args }, { sessionId, id: id++ });
    t.is(codeOf(await call('faultlab.write_marker', { name: 'before' })), 'ok');
    t.is(codeOf(await call('faultlab.slow_read', { seconds: 0 })), 'ok', 'the read and audit pipes are open');

    // Every connection open now goes silent; new connections reach the database as before.
    t.true(proxy.blackhole() >= 2);

    const started = performance.now();
    const codes: string[] = [];
    let recovered = false;
    while (performance.now() - started < 40_000) {
      const code = await Promise.race([
        call('faultlab.slow_read', { seconds: 0 }).then(codeOf),
        new Promise<string>((resolve) => setTimeout(() => resolve('no answer in 15 s'), 15_000)),
      ]);
      codes.push(code);
      if (code === 'ok') {
        recovered = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    t.true(recovered, `a read tool answers ok again within 40 s: ${JSON.stringify(codes)}`);
    t.true(codes.every((c) => ['ok', 'timeout', 'unavailable'].includes(c)), `every failure has a stable code: ${JSON.stringify(codes)}`);
    t.is(codeOf(await call('faultlab.slow_read', { seconds: 0 })), 'ok', 'and keeps answering');

    // Fail closed: every ok read has its audit record, and the chain verifies.
    const oks = await direct('audit_log').where({ connection_id: connection.id, name: 'faultlab.slow_read', outcome: 'ok' }).count({ n: '*' });
    t.is(Number(oks[0].n), 2 + 1, 'the warm-up, the recovered read and the one after');
    const verdict = await verifyChain(chainRows(direct, server.tenants.acme.id));
    t.true(verdict.ok, JSON.stringify(verdict));
  } finally {
    await direct.destroy();
    await lab.close();
  }
});

pgTest('PostgreSQL: a write tool on a pooled connection that stopped answering is answered within bounded time [postgres]', async (t) => {
  t.timeout(120_000);
  const { proxy, server, ...lab } = await behindProxy();
  try {
    const { token } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write'] });
    const sessionId = await openSession(server, token, 'faultlab');
    const call = (name: string, id: number) => rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name } }, { sessionId, id });
    t.is(codeOf(await call('before', 1)), 'ok', 'a pooled connection is open and idle');
    t.true(proxy.blackhole() >= 1);
    // TOOL_TIMEOUT_MS is 1 s and PostgreSQL's own time-outs are under 3 s: 30 s is generous.
    const answer = await Promise.race([
      call('after', 2).then(codeOf),
      new Promise<string>((resolve) => setTimeout(() => resolve('no answer in 30 s'), 30_000)),
    ]);
    t.not(answer, 'no answer in 30 s');
  } finally {
    await lab.close();
  }
});

pgTest('PostgreSQL: a pipe whose new connection is never answered gives it up too, and read tools work again once the database answers [postgres]', async (t) => {
  t.timeout(150_000);
  const { proxy, server, ...lab } = await behindProxy();
  try {
    const { token } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write', 'faultlab.markers.read'] });
    const sessionId = await openSession(server, token, 'faultlab');
    let id = 1;
    const read = () => Promise.race([
      rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.slow_read', arguments: { seconds: 0 } }, { sessionId, id: id++ }).then(codeOf),
      new Promise<string>((resolve) => setTimeout(() => resolve('no answer in 15 s'), 15_000)),
    ]);
    t.is(await read(), 'ok', 'the read and audit pipes are open');

    // The database stops answering: on the open connections and on new ones.
    proxy.blackhole();
    proxy.swallow(true);
    // Reads fail while it is silent; the stalled pipe connections are given up (after 1 + 5 s)
    // and new ones are attempted, which go unanswered as well.
    const during: string[] = [];
    const silentUntil = performance.now() + 14_000;
    while (performance.now() < silentUntil) {
      during.push(await read());
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    t.false(during.includes('ok'), JSON.stringify(during));

    // The database answers new connections again.
    proxy.swallow(false);
    const started = performance.now();
    const after: string[] = [];
    let recovered = false;
    while (performance.now() - started < 45_000) {
      const code = await read();
      after.push(code);
      if (code === 'ok') { recovered = true; break; }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    t.true(recovered, `a read tool answers ok again within 45 s of the database answering: ${JSON.stringify(after)}`);
  } finally {
    await lab.close();
  }
});
