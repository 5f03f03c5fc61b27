/**
 * `npm run bench`: every measurement of DESIGN.md §9 in one run on this machine, with Portico's
 * figures set beside a bare MCP SDK server's as ratios. Servers are pinned to core 0 and load
 * generators to core 1 (when taskset exists), so they do not compete.
 *
 * Flags: --quick (short runs, 100k audit records; under ~3 minutes), --only tools,statements,
 * tokens,revocation,memory,audit (sections), --servers bare,echo,sqlite,postgres,tenants
 * (tools/call scenarios, matched against their names: `sqlite` also selects "sqlite, 8 tenants"),
 * --profile DIR (servers write CPU profiles; see bench/profile_summary.ts).
 * PostgreSQL runs when BENCH_DATABASE_URL or TEST_DATABASE_URL is set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { auditLog, type AuditRow } from './audit_log.js';
import { checkpointPostgres, hasTaskset, KINDS, log, option, QUICK } from './common.js';
import { flatMemory, sessionMemory, type FlatMemory, type SessionMemory } from './memory.js';
import { revocation, type RevocationRow } from './revocation.js';
import { statementCounts, type StatementRow } from './statements.js';
import { tokenEndpoint, type TokenRow } from './tokens.js';
import { SECONDS, toolsCall, TOOLS_ROUNDS, type ToolsCallRow } from './tools_call.js';

const sections = option('only')?.split(',');
const wanted = (name: string) => !sections || sections.includes(name);
const servers = option('servers')?.split(',');
const startedAt = Date.now();

const report: {
  date: string;
  machine: Record<string, unknown>;
  quick: boolean;
  seconds: number;
  tools_call?: ToolsCallRow[];
  statements?: StatementRow[];
  token_endpoint?: TokenRow[];
  revocation?: RevocationRow[];
  session_memory?: SessionMemory;
  memory_under_load?: FlatMemory;
  audit?: AuditRow[];
  duration_s?: number;
} = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, pinned: hasTaskset, load_average: os.loadavg().map((l) => Number(l.toFixed(2))) },
  quick: QUICK,
  seconds: SECONDS,
};

await checkpointPostgres();
if (wanted('tools')) report.tools_call = await toolsCall(KINDS, servers);
if (wanted('statements')) report.statements = await statementCounts(KINDS);
if (wanted('tokens')) report.token_endpoint = await tokenEndpoint(KINDS);
if (wanted('revocation')) report.revocation = await revocation(KINDS);
if (wanted('memory')) {
  report.session_memory = await sessionMemory();
  report.memory_under_load = await flatMemory();
}
if (wanted('audit')) report.audit = await auditLog(KINDS);
report.duration_s = Math.round((Date.now() - startedAt) / 1000);

const dir = path.join(import.meta.dirname, 'results');
fs.mkdirSync(dir, { recursive: true });
const file = path.join(dir, `${report.date.slice(0, 19).replace(/[:T]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
fs.writeFileSync(path.join(dir, 'latest.json'), JSON.stringify(report, null, 2) + '\n');

const out: string[] = [];
const table = (head: string[], rows: Array<Array<unknown>>) => {
  out.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map((v) => v ?? '').join(' | ')} |`), '');
};
out.push(`Run ${report.date} on ${report.machine.cpus} × ${report.machine.model}, Node ${report.machine.node}, ${QUICK ? 'quick' : 'full'} (${SECONDS} s per load, in ${TOOLS_ROUNDS} interleaved rounds for tools/call), load average at start ${(report.machine.load_average as number[]).join(' ')}`, '');
if (report.tools_call) {
  out.push('tools/call (Portico: opaque token, live grant, scope, tenant, forge.list_conversations on tenant data, durable audit record before the reply)', '');
  table(['server', 'c', 'req/s', 'req/s by round', 'p50 ms', 'p99 ms', 'errors', 'server CPU ms/call', 'throughput × bare (node:http)', 'p99 × bare (node:http)', 'throughput × bare (Express)', 'p99 × bare (Express)', 'throughput × raw echo'],
    report.tools_call.map((r) => [r.scenario, r.concurrency, r.rps, r.rounds?.map((round) => round.rps).join(' / '), r.p50, r.p99, r.errors, r.cpu_ms_per_call, r.throughput_ratio, r.p99_ratio, r.throughput_ratio_express, r.p99_ratio_express, r.throughput_ratio_echo]));
}
if (report.statements) {
  out.push('SQL statements per request (knex query events, in-process)', '');
  table(['database', 'request', 'statements', 'of them grant store'], report.statements.map((r) => [r.database, r.request, r.statements, r.grant_store]));
}
if (report.token_endpoint) {
  out.push('Token endpoint (opaque tokens stored through knex)', '');
  table(['database', 'grant', 'c', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
    report.token_endpoint.map((r) => [r.database, r.grant_type, r.concurrency, r.requests, r.rps, r.p50, r.p99, r.errors]));
}
if (report.revocation) {
  out.push('Revocation to reject (console API DELETE; target: zero successes after the response; other instance ≤ 100 ms p99)', '');
  table(['database', 'instance measured', 'revocations', 'calls sent after response', 'of them succeeded', 'refusal p50/p99/max ms', 'GET stream closed p50/p99/max ms'],
    report.revocation.map((r) => [r.database, r.mode, r.revocations, r.calls_after, r.successes_after, `${r.reject_p50} / ${r.reject_p99} / ${r.reject_max}`, `${r.stream_close_p50} / ${r.stream_close_p99} / ${r.stream_close_max}`]));
}
if (report.session_memory) {
  const m = report.session_memory;
  out.push('Memory (target: 1,000 idle sessions with GET streams under 150 MB above idle; flat under load)', '');
  table(['measure', 'value'], [
    [`RSS idle → with ${m.sessions} sessions + GET streams`, `${m.idle_rss_mb} → ${m.with_sessions_rss_mb} MB (+${m.above_idle_mb} MB, ${m.per_session_kb} KB/session)`],
    ['V8 heap idle → with sessions', `${m.heap_idle_mb} → ${m.heap_with_sessions_mb} MB`],
    ...(report.memory_under_load ? [
      [`RSS over ${report.memory_under_load.seconds} s of tools/call at c=${report.memory_under_load.concurrency} (${report.memory_under_load.calls} calls), start → end (max)`,
        `${report.memory_under_load.rss_start_mb} → ${report.memory_under_load.rss_end_mb} MB (${report.memory_under_load.rss_max_mb})`],
      ['V8 heap over the same run, start → end (max)', `${report.memory_under_load.heap_start_mb} → ${report.memory_under_load.heap_end_mb} MB (${report.memory_under_load.heap_max_mb})`],
      ['V8 heap floor (lowest sample), first third → last third of the run', `${report.memory_under_load.heap_floor_first_third_mb} → ${report.memory_under_load.heap_floor_last_third_mb} MB`],
    ] : []),
  ]);
}
if (report.audit) {
  out.push('Audit log at size (targets: filtered query < 50 ms, export > 50,000 records/s)', '');
  table(['database', 'records', 'query tenant+product+1 day p50 / p99 ms (200 queries)', 'first query of a fresh server ms', 'export records', 'JSONL records/s', 'CSV records/s'],
    report.audit.map((r) => [r.database, r.records, `${r.query_p50_ms} / ${r.query_p99_ms}`, r.query_first_ms, r.export_records, r.export_jsonl_records_per_s, r.export_csv_records_per_s]));
}
out.push(`written to ${path.relative(process.cwd(), file)} (${report.duration_s} s)`);
console.log(`\n${out.join('\n')}`);
log('done');
