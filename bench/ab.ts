/**
 * Two builds of Portico compared side by side: both served at the same time on one core (core 0),
 * each driven by its own load generator on the other core, so that whatever else the machine is
 * doing slows both alike. The throughput ratio of two processes sharing one core is the inverse
 * ratio of their CPU per call. On this shared 2-core machine two runs of the same code one after
 * the other differ by 15-30 %; side by side, rounds spread by 2-10 % (docs/performance.md,
 * "How to measure"). The side whose load generator starts second gains a few per cent, so rounds
 * alternate the order and the figure is the geometric mean over them (an even number of rounds).
 *
 * Usage: npx tsx bench/ab.ts [--base REF] [--head REF] [--rounds 4] [--seconds 10] [--postgres]
 *   [--base-node-args ARGS] [--head-node-args ARGS]
 *   --postgres needs BENCH_DATABASE_URL (or TEST_DATABASE_URL) set to a PostgreSQL database to make schemas in.
 *   REF is any git revision; --base defaults to HEAD, --head to the working tree. Each is
 *   compiled with the project's tsconfig.build.json under .bench-ab/ (git-ignored) and run as
 *   `npm start` runs dist/main.js. --base-node-args / --head-node-args: node flags for one side
 *   (e.g. "--max-semi-space-size=64").
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { authorizeWithPassword } from '../test/helpers/oauth.js';
import { compileCheckout, createDatabase, flag, log, node, openSession, option, PASSWORD, pinned, PROTOCOL, startPortico, type Kind } from './common.js';
import type { LoadResult } from './tools_call.js';

const ROOT = path.join(import.meta.dirname, '..');
const WORK = path.join(ROOT, '.bench-ab');
const rounds = Number(option('rounds') ?? 4);
const seconds = Number(option('seconds') ?? 10);
const kind: Kind = flag('postgres') ? 'postgres' : 'sqlite';

/** Compiles a revision (or the working tree) and returns its main.js. */
function build(ref: string | undefined, name: string): string {
  const dir = path.join(WORK, name);
  fs.rmSync(dir, { recursive: true, force: true });
  if (!ref) return compileCheckout(path.join(dir, 'dist'));
  fs.mkdirSync(dir, { recursive: true });
  // The revision's files as they were, with this checkout's installed packages (no shell: REF is passed as an argument).
  const archive = path.join(WORK, `${name}.tar`);
  execFileSync('git', ['-C', ROOT, 'archive', '--output', archive, ref], { stdio: 'inherit' });
  execFileSync('tar', ['-x', '-f', archive, '-C', dir], { stdio: 'inherit' });
  fs.rmSync(archive);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return compileCheckout(undefined, dir);
}

const runLoad = promisify(execFile);

async function load(url: string, token: string, concurrency: number): Promise<LoadResult> {
  const sessionId = await openSession(url, token);
  const payload = { mode: 'tools', url, token, sessionId, concurrency, tool: 'forge.list_conversations', args: { limit: 10 }, protocolVersion: PROTOCOL, seconds, warmupSeconds: 2 };
  const [bin, ...args] = pinned(1, [...node, path.join(import.meta.dirname, 'load.ts'), JSON.stringify(payload)]);
  const { stdout } = await runLoad(bin, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as LoadResult;
}

const sides = [
  { name: 'base', ref: option('base') ?? 'HEAD', nodeArgs: option('base-node-args') },
  { name: 'head', ref: option('head'), nodeArgs: option('head-node-args') },
];
const entries = sides.map((side) => build(side.ref, side.name));
const databases = await Promise.all(sides.map(() => createDatabase(kind)));
const servers = await Promise.all(databases.map((database, i) => startPortico(database, { compiled: entries[i], nodeArgs: sides[i].nodeArgs?.split(' ').filter(Boolean) })));
try {
  const tokens = await Promise.all(servers.map(async (server) => (await authorizeWithPassword(server.url, {
    email: 'admin@acme.example', password: PASSWORD, tenant: 'acme', resource: `${server.url}/mcp/forge`, scopes: ['forge.chat.read'],
  })).accessToken));
  const rows: Array<{ round: number; concurrency: number; base: LoadResult; head: LoadResult; ratio: number }> = [];
  for (let round = 1; round <= rounds; round += 1) {
    for (const concurrency of [10, 50]) {
      const order = round % 2 ? [0, 1] : [1, 0];
      const results: LoadResult[] = [];
      await Promise.all(order.map(async (i, k) => {
        await new Promise((resolve) => setTimeout(resolve, k * 50));
        results[i] = await load(`${servers[i].url}/mcp/forge`, tokens[i], concurrency);
      }));
      const [base, head] = results;
      const ratio = Number((head.rps / base.rps).toFixed(3));
      rows.push({ round, concurrency, base, head, ratio });
      log(`round ${round} c=${concurrency}: base ${base.rps} req/s (p99 ${base.p99} ms), head ${head.rps} req/s (p99 ${head.p99} ms), head/base ${ratio}`);
    }
  }
  // The order a round starts its generators in favours one side by a few per cent, so the
  // figure is the geometric mean over rounds, as many in each order when `rounds` is even.
  const mean = (values: number[]) => Number(Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length).toFixed(3));
  console.log(`\n${kind}: head (${sides[1].ref ?? 'working tree'}) against base (${sides[0].ref}), ${rounds} rounds of ${seconds} s, served side by side on one core\n`);
  if (rounds % 2) console.log('(an odd number of rounds: one order of starting counts once more than the other)\n');
  console.log('| c | head/base throughput, each round (base started first in odd rounds) | geometric mean | errors |');
  console.log('|---|---|---|---|');
  for (const concurrency of [10, 50]) {
    const mine = rows.filter((r) => r.concurrency === concurrency);
    const errors = mine.reduce((sum, r) => sum + r.base.errors + r.head.errors, 0);
    console.log(`| ${concurrency} | ${mine.map((r) => r.ratio).join(', ')} | ${mean(mine.map((r) => r.ratio))} | ${errors} |`);
  }
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  await Promise.all(databases.map((database) => database.drop()));
}
