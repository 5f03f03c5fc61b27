/**
 * What the benchmark sections share: command-line flags, CPU pinning, starting Portico (or the
 * bare baseline) as its own process on its own database, and reading a process's CPU time and
 * memory from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { connectDatabase } from '../db/connect.js';

const argv = process.argv.slice(2);
export const flag = (name: string) => argv.includes(`--${name}`);
export const option = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
export const QUICK = flag('quick');
export const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
export const PROTOCOL = '2025-06-18';
export const PASSWORD = 'bench-password-1';
export type Kind = 'sqlite' | 'postgres';
export const KINDS: Kind[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export const hasTaskset = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return os.cpus().length >= 2;
  } catch {
    return false;
  }
})();
/** Servers run on core 0, load generators on core 1 (when there are two cores and taskset). */
export const pinned = (core: number, command: string[]) => (hasTaskset ? ['taskset', '-c', String(core), ...command] : command);
export const node = [process.execPath, '--import', 'tsx'];
/** --profile DIR: the servers under test write V8 CPU profiles there (node --cpu-prof). */
const PROFILE_DIR = option('profile');
/** Plain node for a server under test (compiled JavaScript, as `npm start` runs), with --profile's flags. */
export const serverNode = PROFILE_DIR ? [process.execPath, '--cpu-prof', '--cpu-prof-dir', path.resolve(PROFILE_DIR)] : [process.execPath];

const ROOT = path.join(import.meta.dirname, '..');
let built: { main: string; bare: string } | undefined;

/**
 * The servers under test, compiled once per run as `npm start` compiles Portico (tsc with
 * tsconfig.build.json, into .bench-ab/run/) and the bare servers beside it. Run from TypeScript
 * through tsx, every function would be wrapped for its name (esbuild's keepNames) on the hot
 * path, which is not how Portico is deployed.
 */
export function compiledServers(): { main: string; bare: string } {
  if (built) return built;
  const out = path.join(ROOT, '.bench-ab', 'run');
  fs.rmSync(out, { recursive: true, force: true });
  const main = compileCheckout(path.join(out, 'dist'));
  execFileSync(process.execPath, [TSC, path.join(import.meta.dirname, 'bare_sdk_server.ts'), '--outDir', path.join(out, 'bench'), '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023', '--skipLibCheck', '--strict'], { stdio: 'inherit' });
  built = { main, bare: path.join(out, 'bench', 'bare_sdk_server.js') };
  return built;
}

const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * This checkout's working tree compiled as `npm start` compiles it (tsconfig.build.json) into
 * `outDir`; returns its main.js. A tree of another revision (bench/ab.ts) is compiled with its own
 * tsconfig: pass its directory as `project`.
 */
export function compileCheckout(outDir?: string, project = ROOT): string {
  const args = [TSC, '-p', path.join(project, 'tsconfig.build.json'), '--incremental', 'false'];
  if (outDir) args.push('--outDir', outDir);
  execFileSync(process.execPath, args, { stdio: 'inherit', cwd: project });
  return path.join(outDir ?? path.join(project, 'dist'), 'main.js');
}

export const log = (line: string) => process.stderr.write(`${line}\n`);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function spawnServer(command: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const [bin, ...rest] = command;
  return spawn(bin, rest, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

export function stopper(child: ChildProcess): () => Promise<void> {
  return () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

export async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not become ready`);
}

/** user + system CPU seconds of a process so far (Linux /proc; 0 elsewhere). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * PostgreSQL: a CHECKPOINT before measuring, so that what earlier work left unwritten (a test
 * suite's thousands of dropped schemas are as many files to sync) is not flushed in the middle of
 * a load: such a checkpoint's sync phase once took 6.3 s and held every commit meanwhile
 * (docs/performance.md, item 14). Needs a superuser or pg_checkpoint; without, the run goes on.
 */
export async function checkpointPostgres(): Promise<void> {
  if (!PG_URL) return;
  const db = knexFactory({ client: 'pg', connection: PG_URL });
  try {
    const started = Date.now();
    await db.raw('checkpoint');
    log(`PostgreSQL CHECKPOINT before measuring: ${Date.now() - started} ms`);
  } catch (error) {
    log(`PostgreSQL CHECKPOINT before measuring not run: ${(error as Error).message}`);
  } finally {
    await db.destroy();
  }
}

/** A fresh database for one server (or several instances sharing it). */
export interface BenchDatabase {
  kind: Kind;
  url: string;
  /** A pool of the bench's own on the same database (seeding, issuing tokens). */
  connect(): Knex;
  drop(): Promise<void>;
}

export async function createDatabase(kind: Kind): Promise<BenchDatabase> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-bench-'));
    const filename = path.join(dir, 'bench.sqlite');
    return { kind, url: `sqlite:${filename}`, connect: () => connectDatabase({ kind: 'sqlite', filename }), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  // Without a URL knex would wait out its pool's acquire time-out and say only "Unable to acquire a connection".
  if (!PG_URL) throw new Error('a PostgreSQL run needs BENCH_DATABASE_URL (or TEST_DATABASE_URL), e.g. postgres://postgres@127.0.0.1:5432/test');
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: PG_URL });
  await admin.raw(`create schema "${schema}"`);
  await admin.destroy();
  const u = new URL(PG_URL);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind, url: u.href,
    connect: () => connectDatabase({ kind: 'postgres', url: u.href }),
    drop: async () => {
      const drop = knexFactory({ client: 'pg', connection: PG_URL });
      await drop.raw(`drop schema "${schema}" cascade`);
      await drop.destroy();
    },
  };
}

export interface RunningPortico {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Portico as `npm start` runs it (compiled, dist/main.js), pinned to core 0, on `database`, with the demo
 * dataset. `publicUrl` lets several instances share one public address (behind a balancer).
 */
export async function startPortico(database: BenchDatabase, options: { env?: Record<string, string>; publicUrl?: string; core?: number; compiled?: string; nodeArgs?: string[] } = {}): Promise<RunningPortico> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // `compiled`: a built main.js (bench/ab.ts's builds); by default this checkout's, compiled as `npm start` compiles it.
  const entry = [...serverNode, ...(options.nodeArgs ?? []), options.compiled ?? compiledServers().main];
  const child = spawnServer(pinned(options.core ?? 0, entry), {
    PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: options.publicUrl ?? url, DATABASE_URL: database.url, DEMO: 'on', DEMO_PASSWORD: PASSWORD,
    LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '1000000', ...options.env,
  });
  child.stdout!.resume(); // request logs are part of the cost; their text is not needed here
  await waitReady(url);
  return { url, pid: child.pid!, stop: stopper(child) };
}

/** initialize + notifications/initialized; returns the session id. Retried once: a kept-alive socket the server just closed fails the first try. */
export async function openSession(url: string, token?: string): Promise<string> {
  return openSessionOnce(url, token).catch(() => openSessionOnce(url, token));
}

async function openSessionOnce(url: string, token?: string): Promise<string> {
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

/** One tools/call of forge.list_conversations; resolves with the HTTP status and whether the call succeeded. */
export async function callTool(url: string, token: string, sessionId: string, id: number): Promise<{ status: number; ok: boolean }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: { limit: 5 } } }),
  });
  const text = await response.text();
  return { status: response.status, ok: response.status === 200 && text.includes('"result"') && !text.includes('"isError":true') };
}

export function percentile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2));
}

export const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** The first line a child prints (the bare server prints its port). */
export async function firstLineOf(child: import('node:child_process').ChildProcess): Promise<string> {
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
