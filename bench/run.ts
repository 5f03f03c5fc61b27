/**
 * `npm run bench`: Portico's full pipeline against a bare MCP SDK server, in one run on this
 * machine, reported as ratios (DESIGN.md §9). The server under test is pinned to core 0 and the
 * load generator to core 1 (when taskset exists), so they do not compete.
 *
 * Flags: --seconds N (default 10), --quick (3 s), --only bare,sqlite,postgres
 * PostgreSQL runs when BENCH_DATABASE_URL or TEST_DATABASE_URL is set.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { authorizeWithPassword } from '../test/helpers/oauth.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const SECONDS = flag('quick') ? 3 : Number(option('seconds') ?? 10);
const WARMUP = flag('quick') ? 1 : 2;
const ONLY = option('only')?.split(',');
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const PROTOCOL = '2025-06-18';
const PASSWORD = 'bench-password-1';
const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return os.cpus().length >= 2;
  } catch {
    return false;
  }
})();
const pinned = (core: number, command: string[]) => (hasTaskset ? ['taskset', '-c', String(core), ...command] : command);
const node = [process.execPath, '--import', 'tsx'];
/** --profile DIR: the servers under test write V8 CPU profiles there (node --cpu-prof). */
const PROFILE_DIR = option('profile');
const serverNode = PROFILE_DIR ? [...node, '--cpu-prof', '--cpu-prof-dir', path.resolve(PROFILE_DIR)] : node;

interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function spawnServer(command: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const [bin, ...rest] = command;
  return spawn(bin, rest, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const newline = text.indexOf('\n');
      if (newline >= 0) resolve(text.slice(0, newline));
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become ready`);
}

/** initialize + notifications/initialized; returns the session id. */
async function openSession(url: string, token?: string): Promise<string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  const init = await fetch(url, {
    method: 'POST', headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
  });
  const sessionId = init.headers.get('mcp-session-id');
  await init.text();
  if (!init.ok || !sessionId) throw new Error(`initialize failed: ${init.status}`);
  const note = await fetch(url, {
    method: 'POST', headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await note.text();
  return sessionId;
}

async function load(input: { url: string; token?: string; sessionId: string; concurrency: number; tool: string; args: Record<string, unknown> }): Promise<LoadResult> {
  const payload = JSON.stringify({ ...input, protocolVersion: PROTOCOL, seconds: SECONDS, warmupSeconds: WARMUP });
  const [bin, ...rest] = pinned(1, [...node, path.join(import.meta.dirname, 'load.ts'), payload]);
  const output = execFileSync(bin, rest, { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(output) as LoadResult;
}

interface Scenario {
  name: string;
  start(): Promise<{ url: string; token?: string; tool: string; args: Record<string, unknown>; stop(): Promise<void> }>;
}

async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () => new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

const bare: Scenario = {
  name: 'bare SDK (no auth, no audit)',
  async start() {
    const child = spawnServer(pinned(0, [...serverNode, path.join(import.meta.dirname, 'bare_sdk_server.ts')]), {});
    const { port } = JSON.parse(await firstLine(child)) as { port: number };
    return { url: `http://127.0.0.1:${port}/mcp`, tool: 'echo', args: { text: 'hello' }, stop: stopper(child) };
  },
};

function portico(kind: 'sqlite' | 'postgres'): Scenario {
  return {
    name: `Portico full pipeline (${kind})`,
    async start() {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      let databaseUrl: string;
      let cleanup = async () => undefined as void;
      if (kind === 'sqlite') {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-bench-'));
        databaseUrl = `sqlite:${path.join(dir, 'bench.sqlite')}`;
        cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
      } else {
        const schema = `bench_${randomBytes(5).toString('hex')}`;
        const admin = knexFactory({ client: 'pg', connection: PG_URL! });
        await admin.raw(`create schema "${schema}"`);
        await admin.destroy();
        const u = new URL(PG_URL!);
        u.searchParams.set('options', `-c search_path=${schema}`);
        databaseUrl = u.href;
        cleanup = async () => {
          const drop = knexFactory({ client: 'pg', connection: PG_URL! });
          await drop.raw(`drop schema "${schema}" cascade`);
          await drop.destroy();
        };
      }
      const child = spawnServer(pinned(0, [...serverNode, path.join(import.meta.dirname, '..', 'main.ts')]), {
        PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: url, DATABASE_URL: databaseUrl, DEMO: 'on', DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '1000000', // throughput is measured above the per-connection limit
      });
      child.stdout!.resume(); // request logs are part of the cost; their text is not needed here
      await waitReady(url);
      const tokens = await authorizeWithPassword(url, {
        email: 'admin@acme.example', password: PASSWORD, tenant: 'acme', resource: `${url}/mcp/forge`, scopes: ['forge.chat.read'],
      });
      const stop = stopper(child);
      return {
        url: `${url}/mcp/forge`, token: tokens.accessToken, tool: 'forge.list_conversations', args: { limit: 10 },
        stop: async () => {
          await stop();
          await cleanup();
        },
      };
    },
  };
}

const scenarios: Scenario[] = [bare, portico('sqlite'), ...(PG_URL ? [portico('postgres')] : [])].filter(
  (s) => !ONLY || ONLY.some((o) => s.name.toLowerCase().includes(o)),
);

const results: Array<{ scenario: string; concurrency: number } & LoadResult> = [];
for (const scenario of scenarios) {
  const running = await scenario.start();
  try {
    for (const concurrency of [10, 50]) {
      const sessionId = await openSession(running.url, running.token);
      const result = await load({ url: running.url, token: running.token, sessionId, concurrency, tool: running.tool, args: running.args });
      results.push({ scenario: scenario.name, concurrency, ...result });
      process.stderr.write(`${scenario.name} c=${concurrency}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}\n`);
    }
  } finally {
    await running.stop();
  }
}

const baseline = (c: number) => results.find((r) => r.scenario === bare.name && r.concurrency === c);
const rows = results.map((r) => {
  const base = baseline(r.concurrency);
  return { ...r, throughput_ratio: base ? Number((r.rps / base.rps).toFixed(2)) : null, p99_ratio: base ? Number((r.p99 / base.p99).toFixed(2)) : null };
});
const report = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, pinned: hasTaskset },
  seconds: SECONDS,
  tools_call: rows,
};
fs.mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
const file = path.join(import.meta.dirname, 'results', `${report.date.slice(0, 19).replace(/[:T]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
fs.writeFileSync(path.join(import.meta.dirname, 'results', 'latest.json'), JSON.stringify(report, null, 2) + '\n');

console.log(`\n| scenario | c | req/s | p50 ms | p99 ms | errors | throughput × bare | p99 × bare |`);
console.log(`|---|---|---|---|---|---|---|---|`);
for (const r of rows) console.log(`| ${r.scenario} | ${r.concurrency} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.throughput_ratio ?? ''} | ${r.p99_ratio ?? ''} |`);
console.log(`\nwritten to ${path.relative(process.cwd(), file)}`);
