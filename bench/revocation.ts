/**
 * Revocation to reject. Same instance: calls keep running while the console revokes their
 * connection; every call sent after the revoke response must fail. Two instances on one
 * PostgreSQL: revoke through A, measure how long B keeps answering calls and keeps the
 * connection's GET stream open after A's response (DESIGN.md §9).
 */
import http from 'node:http';
import type { Knex } from 'knex';
import { issueAccessToken } from '../test/helpers/grants.js';
import { authorizeWithPassword } from '../test/helpers/oauth.js';
import { callTool, createDatabase, log, openSession, PASSWORD, percentile, PROTOCOL, QUICK, sleep, startPortico, type Kind } from './common.js';

const ROUNDS = QUICK ? 15 : 40;

export interface RevocationRow {
  database: Kind;
  mode: 'same instance' | 'two instances';
  revocations: number;
  /** Calls sent after the revoke response (on the instance measured). */
  calls_after: number;
  /** Of those, how many succeeded (must be 0 on the same instance). */
  successes_after: number;
  /** Time from the revoke response until the instance measured refused a call (ms). */
  reject_p50?: number;
  reject_p99?: number;
  reject_max?: number;
  /** Time from the revoke response until the open GET stream closed (ms; 0 = before the response arrived). */
  stream_close_p50?: number;
  stream_close_p99?: number;
  stream_close_max?: number;
}

interface Call {
  sentAt: number;
  doneAt: number;
  ok: boolean;
}

/** Workers calling a tool back to back until `until()` says stop. */
function hammer(url: string, token: string, sessionId: string, workers: number, stopped: () => boolean): { calls: Call[]; done: Promise<void> } {
  const calls: Call[] = [];
  let id = 1000;
  const done = Promise.all(Array.from({ length: workers }, async () => {
    while (!stopped()) {
      const sentAt = performance.now();
      const { ok } = await callTool(url, token, sessionId, id++).catch(() => ({ ok: false }));
      calls.push({ sentAt, doneAt: performance.now(), ok });
    }
  })).then(() => undefined);
  return { calls, done };
}

/** Opens the session's GET stream; resolves `closed` with the time it ended. */
function openStream(url: string, token: string, sessionId: string): Promise<{ closed: Promise<number> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: target.hostname, port: target.port, path: target.pathname, method: 'GET',
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL },
    }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`GET stream: ${response.statusCode}`));
      const closed = new Promise<number>((done) => {
        response.on('data', () => undefined);
        response.on('close', () => done(performance.now()));
      });
      resolve({ closed });
    });
    request.on('error', reject);
    request.end();
  });
}

async function revoke(apiUrl: string, consoleToken: string, connectionId: string): Promise<number> {
  const response = await fetch(`${apiUrl}/api/mcp/v1/connections/${connectionId}`, { method: 'DELETE', headers: { authorization: `Bearer ${consoleToken}` } });
  await response.text();
  if (response.status !== 200) throw new Error(`revoke failed: ${response.status}`);
  return performance.now();
}

async function actors(db: Knex) {
  const tenant = await db('tenants').where({ slug: 'acme' }).first('id');
  const user = await db('users').where({ email: 'admin@acme.example' }).first('id');
  return { tenantId: tenant.id as string, userId: user.id as string };
}

export async function revocation(kinds: Kind[]): Promise<RevocationRow[]> {
  const rows: RevocationRow[] = [];
  for (const kind of kinds) {
    const database = await createDatabase(kind);
    const a = await startPortico(database);
    const b = kind === 'postgres' ? await startPortico(database, { publicUrl: a.url, core: 1 }) : undefined;
    const pool = database.connect();
    try {
      const consoleToken = (await authorizeWithPassword(a.url, {
        email: 'admin@acme.example', password: PASSWORD, tenant: 'acme', resource: `${a.url}/api/mcp`, scopes: ['console.connections.write', 'console.connections.read'],
      })).accessToken;
      const { tenantId, userId } = await actors(pool);
      const resource = `${a.url}/mcp/forge`;
      for (const mode of b ? (['same instance', 'two instances'] as const) : (['same instance'] as const)) {
        const target = mode === 'same instance' ? a : b!;
        const url = `${target.url}/mcp/forge`;
        let callsAfter = 0;
        let successesAfter = 0;
        const rejects: number[] = [];
        const closes: number[] = [];
        for (let round = 0; round < ROUNDS; round += 1) {
          const { token, connection } = await issueAccessToken(pool, { tenantId, userId, product: 'forge', resource, scopes: ['forge.chat.read'] });
          const sessionId = await openSession(url, token);
          const stream = await openStream(url, token, sessionId);
          for (let i = 0; i < 3; i += 1) await callTool(url, token, sessionId, i + 1); // the principal is cached now
          let stop = false;
          const load = hammer(url, token, sessionId, 3, () => stop);
          await sleep(20);
          const answered = await revoke(a.url, consoleToken, connection.id);
          const deadline = performance.now() + 2_000;
          while (performance.now() < deadline && !load.calls.some((c) => !c.ok && c.sentAt > answered)) await sleep(2);
          await sleep(20);
          stop = true;
          await load.done;
          const after = load.calls.filter((c) => c.sentAt > answered);
          callsAfter += after.length;
          successesAfter += after.filter((c) => c.ok).length;
          const firstRefusal = Math.min(...load.calls.filter((c) => !c.ok).map((c) => c.doneAt));
          rejects.push(Math.max(0, firstRefusal - answered));
          const closedAt = await Promise.race([stream.closed, sleep(2_000).then(() => Number.POSITIVE_INFINITY)]);
          closes.push(Math.max(0, closedAt - answered));
        }
        rejects.sort((x, y) => x - y);
        closes.sort((x, y) => x - y);
        const row: RevocationRow = {
          database: kind, mode, revocations: ROUNDS, calls_after: callsAfter, successes_after: successesAfter,
          reject_p50: percentile(rejects, 0.5), reject_p99: percentile(rejects, 0.99), reject_max: percentile(rejects, 1),
          stream_close_p50: percentile(closes, 0.5), stream_close_p99: percentile(closes, 0.99), stream_close_max: percentile(closes, 1),
        };
        rows.push(row);
        log(`revocation (${kind}, ${mode}): ${successesAfter}/${callsAfter} calls succeeded after the revoke response; reject p99 ${row.reject_p99} ms, stream close p99 ${row.stream_close_p99} ms`);
      }
    } finally {
      await pool.destroy();
      await b?.stop();
      await a.stop();
      await database.drop();
    }
  }
  return rows;
}
