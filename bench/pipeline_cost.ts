/**
 * Where the CPU of one tools/call goes inside the trust pipeline, without HTTP: the pipeline is
 * called directly by N concurrent callers in one process pinned to core 0, and the same run is
 * repeated with parts taken away, each in a fresh process:
 *
 *   full        token cache, scope, schema, tenant, forge.list_conversations, durable audit record
 *   no-audit    the same without the audit record
 *   no-handler  the same with a handler that reads nothing
 *   neither     no audit record and no database read: the pipeline's own JavaScript
 *
 * The differences are what the handler's reads and the audit record cost per call. A diagnostic
 * for docs/performance.md, not part of `npm run bench` (whose figures include HTTP).
 *
 * Usage: npx tsx bench/pipeline_cost.ts [--concurrency 10,50] [--seconds 5] [--postgres]
 */
import { execFileSync } from 'node:child_process';
import { createDatabase, option, flag, pinned, PASSWORD, type Kind } from './common.js';

const VARIANTS = ['full', 'no-audit', 'no-handler', 'neither'] as const;
type Variant = (typeof VARIANTS)[number];

const child = option('variant') as Variant | undefined;
if (child) await measure(child, Number(option('concurrency')), Number(option('seconds')), (option('kind') ?? 'sqlite') as Kind);
else parent();

function parent(): void {
  const concurrencies = (option('concurrency') ?? '10,50').split(',').map(Number);
  const seconds = option('seconds') ?? '5';
  const kind: Kind = flag('postgres') ? 'postgres' : 'sqlite';
  console.log(`pipeline cost on ${kind} (CPU µs per call, in process, no HTTP)\n`);
  console.log('| variant | c | calls/s | CPU µs/call |');
  console.log('|---|---|---|---|');
  for (const concurrency of concurrencies) {
    for (const variant of VARIANTS) {
      const [bin, ...args] = pinned(0, [process.execPath, '--import', 'tsx', import.meta.filename, '--variant', variant, '--concurrency', String(concurrency), '--seconds', seconds, '--kind', kind]);
      const line = execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env } }).trim().split('\n').at(-1)!;
      const { callsPerSecond, cpuMicros } = JSON.parse(line) as { callsPerSecond: number; cpuMicros: number };
      console.log(`| ${variant} | ${concurrency} | ${callsPerSecond} | ${cpuMicros} |`);
    }
  }
}

async function measure(variant: Variant, concurrency: number, seconds: number, kind: Kind): Promise<void> {
  const { forgePipeline } = await import('../test/helpers/pipeline.js');

  const database = await createDatabase(kind);
  const db = database.connect();
  try {
    const { pipeline, principal } = await forgePipeline(db, database.url, PASSWORD);

    // Parts taken away, in this process only (it measures one variant and exits).
    if (variant === 'no-audit' || variant === 'neither') (pipeline as unknown as { audit: { append(): Promise<unknown> } }).audit.append = async () => ({});
    if (variant === 'no-handler' || variant === 'neither') {
      (pipeline.compiled('forge.list_conversations')!.tool as { handler: unknown }).handler = async () => ({ conversations: [], next_cursor: null });
    }

    let n = 0;
    const run = async (ms: number) => {
      const end = performance.now() + ms;
      let calls = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const result = await pipeline.callTool('forge', principal, 'forge.list_conversations', { limit: 10 }, { requestId: `bench-${n++}` });
          if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result.structuredContent)}`);
          calls += 1;
        }
      }));
      return calls;
    };
    await run(1_000);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const calls = await run(seconds * 1000);
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - started;
    await pipeline.close();
    console.log(JSON.stringify({ callsPerSecond: Math.round((calls / wall) * 1000), cpuMicros: Math.round((used.user + used.system) / calls) }));
  } finally {
    await db.destroy();
    await database.drop();
  }
}
