/**
 * Memory: 1,000 idle MCP sessions each holding a GET stream (RSS above an idle server), and
 * whether memory stays flat over a sustained tools/call load (RSS and V8 heap, from the server's
 * /metrics, sampled through the run).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { issueAccessToken } from '../test/helpers/grants.js';
import { callTool, createDatabase, log, node, openSession, pinned, PROTOCOL, QUICK, rssBytes, sleep, startPortico } from './common.js';

const SESSIONS = 1_000;
export const FLAT_SECONDS = QUICK ? 15 : 60;
const MB = 1024 * 1024;

export interface SessionMemory {
  sessions: number;
  idle_rss_mb: number;
  with_sessions_rss_mb: number;
  above_idle_mb: number;
  per_session_kb: number;
  heap_idle_mb: number;
  heap_with_sessions_mb: number;
}

export interface FlatMemory {
  seconds: number;
  concurrency: number;
  calls: number;
  rss_start_mb: number;
  rss_end_mb: number;
  rss_max_mb: number;
  heap_start_mb: number;
  heap_end_mb: number;
  heap_max_mb: number;
  /**
   * The heap is a sawtooth (garbage piles up between collections), so a leak shows in its
   * floor: the lowest sample of the first and of the last third of the steady run.
   */
  heap_floor_first_third_mb: number;
  heap_floor_last_third_mb: number;
  samples: Array<{ t: number; rss_mb: number; heap_mb: number }>;
}

async function heapBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^portico_process_heap_used_bytes (\d+)/m.exec(text)?.[1] ?? 0);
}

const mb = (bytes: number) => Number((bytes / MB).toFixed(1));

function holdStream(url: string, token: string, sessionId: string, agent: http.Agent): Promise<http.ClientRequest> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: target.hostname, port: target.port, path: target.pathname, method: 'GET', agent,
      headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL },
    }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`GET stream: ${response.statusCode}`));
      response.on('data', () => undefined);
      resolve(request);
    });
    request.on('error', reject);
    request.end();
  });
}

export async function sessionMemory(): Promise<SessionMemory> {
  const database = await createDatabase('sqlite');
  const server = await startPortico(database, { env: { MAX_SESSIONS_PER_CONNECTION: '1000', MAX_SESSIONS_PER_USER: '2000' } });
  const pool = database.connect();
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const streams: http.ClientRequest[] = [];
  try {
    const url = `${server.url}/mcp/forge`;
    const tenant = await pool('tenants').where({ slug: 'acme' }).first('id');
    const user = await pool('users').where({ email: 'admin@acme.example' }).first('id');
    const tokens = await Promise.all([0, 1].map(async () => (await issueAccessToken(pool, { tenantId: tenant.id, userId: user.id, product: 'forge', resource: url, scopes: ['forge.chat.read'] })).token));
    // Warm every code path once, then let the server settle.
    const warm = await openSession(url, tokens[0]);
    for (let i = 0; i < 50; i += 1) await callTool(url, tokens[0], warm, i + 1);
    await sleep(2_000);
    const idle = rssBytes(server.pid);
    const heapIdle = await heapBytes(server.url);
    for (let i = 0; i < SESSIONS; i += 20) {
      await Promise.all(Array.from({ length: Math.min(20, SESSIONS - i) }, async (_, j) => {
        const token = tokens[(i + j) % 2];
        const sessionId = await openSession(url, token);
        streams.push(await holdStream(url, token, sessionId, agent));
      }));
    }
    await sleep(3_000);
    const loaded = rssBytes(server.pid);
    const heapLoaded = await heapBytes(server.url);
    const result = {
      sessions: streams.length, idle_rss_mb: mb(idle), with_sessions_rss_mb: mb(loaded), above_idle_mb: mb(loaded - idle),
      per_session_kb: Number(((loaded - idle) / 1024 / streams.length).toFixed(1)), heap_idle_mb: mb(heapIdle), heap_with_sessions_mb: mb(heapLoaded),
    };
    log(`memory: ${streams.length} sessions with GET streams: RSS ${result.idle_rss_mb} → ${result.with_sessions_rss_mb} MB (+${result.above_idle_mb} MB, ${result.per_session_kb} KB each)`);
    return result;
  } finally {
    for (const stream of streams) stream.destroy();
    agent.destroy();
    await pool.destroy();
    await server.stop();
    await database.drop();
  }
}

export async function flatMemory(): Promise<FlatMemory> {
  const database = await createDatabase('sqlite');
  const server = await startPortico(database);
  const pool = database.connect();
  try {
    const url = `${server.url}/mcp/forge`;
    const tenant = await pool('tenants').where({ slug: 'acme' }).first('id');
    const user = await pool('users').where({ email: 'admin@acme.example' }).first('id');
    const { token } = await issueAccessToken(pool, { tenantId: tenant.id, userId: user.id, product: 'forge', resource: url, scopes: ['forge.chat.read'] });
    const sessionId = await openSession(url, token);
    const concurrency = 50;
    const payload = JSON.stringify({ mode: 'tools', url, token, sessionId, concurrency, tool: 'forge.list_conversations', args: { limit: 10 }, protocolVersion: PROTOCOL, seconds: FLAT_SECONDS, warmupSeconds: 0 });
    const [bin, ...rest] = pinned(1, [...node, path.join(import.meta.dirname, 'load.ts'), payload]);
    const child = spawn(bin, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const finished = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const samples: FlatMemory['samples'] = [];
    const started = performance.now();
    let running = true;
    void finished.then(() => (running = false));
    while (running) {
      await Promise.race([sleep(Math.max(1_000, (FLAT_SECONDS * 1000) / 30)), finished]);
      if (!running) break;
      samples.push({ t: Number(((performance.now() - started) / 1000).toFixed(1)), rss_mb: mb(rssBytes(server.pid)), heap_mb: mb(await heapBytes(server.url)) });
    }
    const load = JSON.parse(output) as { requests: number };
    // The first tenth is warm-up (JIT, pools, caches); "start" is the first sample after it.
    const steady = samples.filter((s) => s.t >= FLAT_SECONDS / 10);
    const first = steady[0] ?? samples[0];
    const last = samples[samples.length - 1];
    const third = (FLAT_SECONDS - first.t) / 3;
    const floor = (from: number, to: number) => Math.min(...steady.filter((s) => s.t >= from && s.t <= to).map((s) => s.heap_mb));
    const result = {
      seconds: FLAT_SECONDS, concurrency, calls: load.requests,
      rss_start_mb: first.rss_mb, rss_end_mb: last.rss_mb, rss_max_mb: Math.max(...samples.map((s) => s.rss_mb)),
      heap_start_mb: first.heap_mb, heap_end_mb: last.heap_mb, heap_max_mb: Math.max(...samples.map((s) => s.heap_mb)),
      heap_floor_first_third_mb: floor(first.t, first.t + third), heap_floor_last_third_mb: floor(last.t - third, last.t),
      samples,
    };
    log(`memory over ${FLAT_SECONDS} s of load (${load.requests} calls): RSS ${result.rss_start_mb} → ${result.rss_end_mb} MB, heap ${result.heap_start_mb} → ${result.heap_end_mb} MB, heap floor ${result.heap_floor_first_third_mb} → ${result.heap_floor_last_third_mb} MB`);
    return result;
  } finally {
    await pool.destroy();
    await server.stop();
    await database.drop();
  }
}
