/**
 * Audited tools/call against the bare SDK baseline: throughput, p50/p99 and the server's CPU time
 * per call, at concurrency 10 and 50 (DESIGN.md §9).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { addMembership, createTenant, createUser } from '../db/accounts.js';
import { forge } from '../mcp/products/forge/index.js';
import { authorizeWithPassword } from '../test/helpers/oauth.js';
import {
  compiledServers, cpuSeconds, createDatabase, firstLineOf, log, node, openSession, PASSWORD, percentile, pinned, PROTOCOL, QUICK, serverNode, spawnServer, startPortico, stopper, type Kind,
} from './common.js';

/** Measured seconds per load; for tools/call per server and concurrency, split over TOOLS_ROUNDS interleaved rounds (toolsCall). */
export const SECONDS = QUICK ? 3 : 10;
export const TOOLS_ROUNDS = QUICK ? 1 : 2;
const WARMUP = QUICK ? 1 : 2;

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function runLoad(payload: Record<string, unknown>): LoadResult {
  const [bin, ...rest] = pinned(1, [...node, path.join(import.meta.dirname, 'load.ts'), JSON.stringify(payload)]);
  return JSON.parse(execFileSync(bin, rest, { encoding: 'utf8', maxBuffer: 64 << 20 })) as LoadResult;
}

interface Target {
  url: string;
  pid: number;
  /** One per tenant the load is spread over (none for the bare servers). */
  tokens: string[];
  tool: string;
  args: Record<string, unknown>;
  stop(): Promise<void>;
}

export interface ToolsCallRow extends LoadResult {
  scenario: string;
  concurrency: number;
  /** Server CPU milliseconds per call (user + system, /proc), including warm-up calls' share. */
  cpu_ms_per_call: number;
  /** Each round's own figures (toolsCall), to show how far the rounds lie apart. */
  rounds?: Array<{ rps: number; p99: number }>;
  /** Against the bare SDK server on node:http (the faster baseline). */
  throughput_ratio?: number;
  p99_ratio?: number;
  /** Against the bare SDK server on the SDK's Express app. */
  throughput_ratio_express?: number;
  p99_ratio_express?: number;
  /** Against the hand-written JSON-RPC echo (no SDK): throughput only, the ceiling of a JSON-RPC server here. */
  throughput_ratio_echo?: number;
}

export const BARE = 'bare SDK on node:http (no auth, no audit)';
export const BARE_EXPRESS = "bare SDK on the SDK's Express app (no auth, no audit)";
export const ECHO = 'raw JSON-RPC echo on node:http (no SDK)';

async function startBare(flags: string[]): Promise<Target> {
  const child = spawnServer(pinned(0, [...serverNode, compiledServers().bare, ...flags]), {});
  const { port } = JSON.parse(await firstLineOf(child)) as { port: number };
  return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid!, tokens: [], tool: 'echo', args: { text: 'hello' }, stop: stopper(child) };
}

/** Tenants of the several-tenants row: each call's tenant is its connection's (load.ts `sessions`). */
export const TENANTS = 8;

/**
 * Portico with the demo dataset. `tenants` > 1: that many tenants take the load, acme and
 * `tenants - 1` more, each with its own admin, forge's demo rows and its own token, so every
 * audit batch carries records of several chains.
 */
async function startFull(kind: Kind, tenants = 1): Promise<Target> {
  const database = await createDatabase(kind);
  const server = await startPortico(database);
  const admins = [{ email: 'admin@acme.example', tenant: 'acme' }];
  if (tenants > 1) {
    const db = database.connect();
    try {
      for (let n = 2; n <= tenants; n += 1) {
        await db.transaction(async (trx) => {
          const tenant = await createTenant(trx, { slug: `tenant-${n}`, name: `Tenant ${n}` });
          const user = await createUser(trx, { email: `admin@tenant-${n}.example`, password: PASSWORD, displayName: `Admin ${n}` });
          await addMembership(trx, { userId: user.id, tenantId: tenant.id, role: 'admin' });
          await forge.seedDemo!(trx, tenant, { [user.email]: user.id });
          admins.push({ email: user.email, tenant: tenant.slug });
        });
      }
    } finally {
      await db.destroy();
    }
  }
  const tokens: string[] = [];
  for (const { email, tenant } of admins) {
    tokens.push((await authorizeWithPassword(server.url, { email, password: PASSWORD, tenant, resource: `${server.url}/mcp/forge`, scopes: ['forge.chat.read'] })).accessToken);
  }
  return {
    url: `${server.url}/mcp/forge`, pid: server.pid, tokens, tool: 'forge.list_conversations', args: { limit: 10 },
    stop: async () => {
      await server.stop();
      await database.drop();
    },
  };
}

/**
 * Every server is started first, and then each is loaded in TOOLS_ROUNDS rounds, the order reversed in
 * every other round (A B C … then … C B A). This machine's speed drifts by tens of per cent within
 * minutes (docs/performance.md, "How to measure"); run one server after the other, a baseline and
 * Portico measured a minute apart can land on different sides of such a drift, and the ratio
 * shows the drift. Interleaved, every server sees the same stretch of the run. A row merges its
 * rounds: throughput over all measured seconds, percentiles of all latencies together.
 */
export async function toolsCall(kinds: Kind[], only?: string[]): Promise<ToolsCallRow[]> {
  const scenarios: Array<{ name: string; start(): Promise<Target> }> = [
    { name: BARE, start: () => startBare([]) },
    { name: BARE_EXPRESS, start: () => startBare(['--express']) },
    { name: ECHO, start: () => startBare(['--echo']) },
    ...kinds.map((kind) => ({ name: `Portico full pipeline (${kind})`, start: () => startFull(kind) })),
    ...kinds.map((kind) => ({ name: `Portico full pipeline (${kind}, ${TENANTS} tenants)`, start: () => startFull(kind, TENANTS) })),
  ].filter((s) => !only || only.some((o) => s.name.toLowerCase().includes(o)));
  const targets: Array<{ name: string; target: Target }> = [];
  const runs = new Map<string, Array<LoadResult & { latencies: number[]; cpuSeconds: number; calls: number }>>();
  try {
    for (const scenario of scenarios) targets.push({ name: scenario.name, target: await scenario.start() });
    for (let round = 0; round < TOOLS_ROUNDS; round += 1) {
      for (const { name, target } of round % 2 ? [...targets].reverse() : targets) {
        for (const concurrency of [10, 50]) {
          const sessions = target.tokens.length ? await Promise.all(target.tokens.map(async (token) => ({ token, sessionId: await openSession(target.url, token) }))) : [{ sessionId: await openSession(target.url) }];
          // The first round warms each server up (JIT, caches); later ones only open the load generator's connections.
          const warmup = round === 0 ? WARMUP : 1;
          const cpuBefore = cpuSeconds(target.pid);
          const result = runLoad({ mode: 'tools', url: target.url, sessions, concurrency, tool: target.tool, args: target.args, protocolVersion: PROTOCOL, seconds: SECONDS / TOOLS_ROUNDS, warmupSeconds: warmup, raw: true }) as LoadResult & { latencies: number[] };
          const cpu = cpuSeconds(target.pid) - cpuBefore;
          const key = `${name}\n${concurrency}`;
          runs.set(key, [...(runs.get(key) ?? []), { ...result, cpuSeconds: cpu, calls: result.requests * ((result.seconds + warmup) / result.seconds) }]);
          log(`${name} c=${concurrency}, round ${round + 1}/${TOOLS_ROUNDS}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}`);
        }
      }
    }
  } finally {
    for (const { target } of targets) await target.stop();
  }
  const rows: ToolsCallRow[] = [];
  for (const { name } of targets) {
    for (const concurrency of [10, 50]) {
      const rounds = runs.get(`${name}\n${concurrency}`) ?? [];
      const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
      const requests = latencies.length;
      const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
      const cpu = rounds.reduce((sum, r) => sum + r.cpuSeconds, 0);
      const calls = rounds.reduce((sum, r) => sum + r.calls, 0);
      rows.push({
        scenario: name, concurrency, requests, errors: rounds.reduce((sum, r) => sum + r.errors, 0), seconds: Number(seconds.toFixed(2)),
        rps: Math.round(requests / seconds), p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), p99: percentile(latencies, 0.99), max: percentile(latencies, 1),
        cpu_ms_per_call: Number(((cpu * 1000) / Math.max(1, calls)).toFixed(3)),
        rounds: rounds.map((r) => ({ rps: r.rps, p99: r.p99 })),
      });
    }
  }
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  for (const row of rows) {
    const base = rows.find((r) => r.scenario === BARE && r.concurrency === row.concurrency);
    const express = rows.find((r) => r.scenario === BARE_EXPRESS && r.concurrency === row.concurrency);
    const echo = rows.find((r) => r.scenario === ECHO && r.concurrency === row.concurrency);
    if (base) Object.assign(row, { throughput_ratio: ratio(row.rps, base.rps), p99_ratio: ratio(row.p99, base.p99) });
    if (express) Object.assign(row, { throughput_ratio_express: ratio(row.rps, express.rps), p99_ratio_express: ratio(row.p99, express.p99) });
    if (echo) row.throughput_ratio_echo = ratio(row.rps, echo.rps);
  }
  return rows;
}
