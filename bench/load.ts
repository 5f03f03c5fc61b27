/**
 * A closed-loop load generator, run as its own process (pinned to its own core by run.ts) so it
 * does not steal the server's CPU.
 *
 * Input (argv[2], JSON), one of:
 *   { mode: 'tools', url, token?, sessionId, protocolVersion, concurrency, seconds, warmupSeconds, tool, args }
 *   { mode: 'tools', url, sessions: [{ token, sessionId }], …}     connection i calls as sessions[i % n]
 *   { mode: 'token', url, concurrency, bodies: string[] }          each form body POSTed once (code exchanges)
 *   { mode: 'refresh', url, concurrency, seconds, clientId, refreshTokens: string[] }
 *                                                                  one rotating chain per refresh token
 * Output (stdout, JSON): { requests, errors, seconds, rps, p50, p90, p99, max } (latencies in ms),
 * and with `raw: true` (tools mode) every measured latency too, in ms to the µs (`latencies`), so
 * that runs of one server in several rounds can be merged into one distribution (tools_call.ts).
 */
import http from 'node:http';

interface ToolsInput {
  mode?: 'tools';
  url: string;
  token?: string;
  sessionId?: string;
  /** Several callers (e.g. one per tenant): connection i uses sessions[i % sessions.length]. */
  sessions?: Array<{ token?: string; sessionId?: string }>;
  protocolVersion: string;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  tool: string;
  args: Record<string, unknown>;
  raw?: boolean;
}
interface TokenInput {
  mode: 'token';
  url: string;
  concurrency: number;
  bodies: string[];
}
interface RefreshInput {
  mode: 'refresh';
  url: string;
  concurrency: number;
  seconds: number;
  clientId: string;
  refreshTokens: string[];
}

const input = JSON.parse(process.argv[2]) as ToolsInput | TokenInput | RefreshInput;
const target = new URL(input.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: input.concurrency });

function post(headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const request = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', () => resolve({ status: 0, text: '' }));
    });
    request.on('error', () => resolve({ status: 0, text: '' }));
    request.end(body);
  });
}

const latencies: number[] = [];
let errors = 0;

function report(seconds: number, raw = false): void {
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
  process.stdout.write(JSON.stringify({
    requests: latencies.length, errors, seconds: Number(seconds.toFixed(2)), rps: Math.round(latencies.length / seconds),
    p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1),
    ...(raw ? { latencies: latencies.map((ms) => Math.round(ms * 1000) / 1000) } : {}),
  }));
  agent.destroy();
}

async function timed(work: () => Promise<boolean>): Promise<void> {
  const t0 = performance.now();
  const ok = await work();
  latencies.push(performance.now() - t0);
  if (!ok) errors += 1;
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };

if (input.mode === 'token') {
  const queue = [...input.bodies];
  const start = performance.now();
  await Promise.all(Array.from({ length: input.concurrency }, async () => {
    for (let body = queue.shift(); body !== undefined; body = queue.shift()) {
      const next = body;
      await timed(async () => (await post(form, next)).status === 200);
    }
  }));
  report((performance.now() - start) / 1000);
} else if (input.mode === 'refresh') {
  const { clientId } = input;
  const start = performance.now();
  const end = start + input.seconds * 1000;
  await Promise.all(input.refreshTokens.map(async (first) => {
    let token = first;
    while (performance.now() < end) {
      await timed(async () => {
        const { status, text } = await post(form, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }).toString());
        if (status !== 200) return false;
        token = (JSON.parse(text) as { refresh_token: string }).refresh_token;
        return true;
      });
    }
  }));
  report((performance.now() - start) / 1000);
} else {
  const callers = (input.sessions ?? [{ token: input.token, sessionId: input.sessionId }]).map(({ token, sessionId }) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': input.protocolVersion };
    if (token) headers.authorization = `Bearer ${token}`;
    if (sessionId) headers['mcp-session-id'] = sessionId;
    return headers;
  });
  let nextId = 1;
  const start = performance.now();
  const warmupEnd = start + input.warmupSeconds * 1000;
  const end = warmupEnd + input.seconds * 1000;
  let measuredStart = 0;
  await Promise.all(Array.from({ length: input.concurrency }, async (_, connection) => {
    const headers = callers[connection % callers.length];
    while (performance.now() < end) {
      const t0 = performance.now();
      const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: input.tool, arguments: input.args } });
      const { status, text } = await post(headers, body);
      const ok = status === 200 && text.includes('"result"') && !text.includes('"isError":true');
      if (t0 >= warmupEnd) {
        measuredStart ||= t0;
        latencies.push(performance.now() - t0);
        if (!ok) errors += 1;
      }
    }
  }));
  report((performance.now() - (measuredStart || warmupEnd)) / 1000, input.raw);
}
