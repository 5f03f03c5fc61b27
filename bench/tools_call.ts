/**
 * Audited tools/call against the bare SDK baseline: throughput, p50/p99 and the server's CPU time
 * per call, at concurrency 10 and 50 (DESIGN.md §9).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { authorizeWithPassword } from '../test/helpers/oauth.js';
import {
  compiledServers, cpuSeconds, createDatabase, firstLineOf, log, node, openSession, PASSWORD, pinned, PROTOCOL, QUICK, serverNode, spawnServer, startPortico, stopper, type Kind,
} from './common.js';

export const SECONDS = QUICK ? 3 : 10;
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
  return JSON.parse(execFileSync(bin, rest, { encoding: 'utf8', maxBuffer: 1 << 20 })) as LoadResult;
}

interface Target {
  url: string;
  pid: number;
  token?: string;
  tool: string;
  args: Record<string, unknown>;
  stop(): Promise<void>;
}

export interface ToolsCallRow extends LoadResult {
  scenario: string;
  concurrency: number;
  /** Server CPU milliseconds per call (user + system, /proc), including warm-up calls' share. */
  cpu_ms_per_call: number;
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
  return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid!, tool: 'echo', args: { text: 'hello' }, stop: stopper(child) };
}

async function startFull(kind: Kind): Promise<Target> {
  const database = await createDatabase(kind);
  const server = await startPortico(database);
  const tokens = await authorizeWithPassword(server.url, {
    email: 'admin@acme.example', password: PASSWORD, tenant: 'acme', resource: `${server.url}/mcp/forge`, scopes: ['forge.chat.read'],
  });
  return {
    url: `${server.url}/mcp/forge`, pid: server.pid, token: tokens.accessToken, tool: 'forge.list_conversations', args: { limit: 10 },
    stop: async () => {
      await server.stop();
      await database.drop();
    },
  };
}

export async function toolsCall(kinds: Kind[], only?: string[]): Promise<ToolsCallRow[]> {
  const scenarios: Array<{ name: string; start(): Promise<Target> }> = [
    { name: BARE, start: () => startBare([]) },
    { name: BARE_EXPRESS, start: () => startBare(['--express']) },
    { name: ECHO, start: () => startBare(['--echo']) },
    ...kinds.map((kind) => ({ name: `Portico full pipeline (${kind})`, start: () => startFull(kind) })),
  ].filter((s) => !only || only.some((o) => s.name.toLowerCase().includes(o)));
  const rows: ToolsCallRow[] = [];
  for (const scenario of scenarios) {
    const target = await scenario.start();
    try {
      for (const concurrency of [10, 50]) {
        const sessionId = await openSession(target.url, target.token);
        const cpuBefore = cpuSeconds(target.pid);
        const result = runLoad({ mode: 'tools', url: target.url, token: target.token, sessionId, concurrency, tool: target.tool, args: target.args, protocolVersion: PROTOCOL, seconds: SECONDS, warmupSeconds: WARMUP });
        const cpu = cpuSeconds(target.pid) - cpuBefore;
        const calls = result.requests * ((SECONDS + WARMUP) / SECONDS);
        rows.push({ scenario: scenario.name, concurrency, ...result, cpu_ms_per_call: Number(((cpu * 1000) / Math.max(1, calls)).toFixed(3)) });
        log(`${scenario.name} c=${concurrency}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}`);
      }
    } finally {
      await target.stop();
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
