/**
 * A closed-loop load generator for MCP tools/call over Streamable HTTP, run as its own process
 * (pinned to its own core by run.ts) so it does not steal the server's CPU.
 *
 * Input (argv[2], JSON): { url, token?, sessionId, concurrency, seconds, warmupSeconds, tool, args }
 * Output (stdout, JSON): { requests, errors, seconds, rps, p50, p90, p99, max } (latencies in ms)
 */
import http from 'node:http';

interface LoadInput {
  url: string;
  token?: string;
  sessionId?: string;
  protocolVersion: string;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  tool: string;
  args: Record<string, unknown>;
}

const input = JSON.parse(process.argv[2]) as LoadInput;
const target = new URL(input.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: input.concurrency });
const headers: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': input.protocolVersion,
};
if (input.token) headers.authorization = `Bearer ${input.token}`;
if (input.sessionId) headers['mcp-session-id'] = input.sessionId;

let nextId = 1;
function call(): Promise<{ ok: boolean }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: input.tool, arguments: input.args } });
  return new Promise((resolve) => {
    const request = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ ok: response.statusCode === 200 && text.includes('"result"') && !text.includes('"isError":true') }));
      response.on('error', () => resolve({ ok: false }));
    });
    request.on('error', () => resolve({ ok: false }));
    request.end(body);
  });
}

async function run(): Promise<void> {
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  const start = performance.now();
  const warmupEnd = start + input.warmupSeconds * 1000;
  const end = warmupEnd + input.seconds * 1000;
  let measuredStart = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const { ok } = await call();
      const t1 = performance.now();
      if (t0 >= warmupEnd) {
        if (!measuring) {
          measuring = true;
          measuredStart = t0;
        }
        latencies.push(t1 - t0);
        if (!ok) errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: input.concurrency }, worker));
  const seconds = (performance.now() - (measuredStart || warmupEnd)) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
  process.stdout.write(JSON.stringify({
    requests: latencies.length, errors, seconds: Number(seconds.toFixed(2)), rps: Math.round(latencies.length / seconds),
    p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1),
  }));
  agent.destroy();
}

await run();
