/**
 * The baselines: a bare @modelcontextprotocol/sdk server doing the same kind of tool call with no
 * auth, no tenant check and no audit. Stateful Streamable HTTP, one trivial tool, SSE replies.
 *
 *   (default)   on node:http, the body parsed by hand: the cheapest way to serve the SDK we found
 *   --express   the SDK's own Express app (`createMcpExpressApp`), as its README and example
 *               servers set it up
 *
 * Prints `{ "port": N }` when listening.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const transports = new Map<string, StreamableHTTPServerTransport>();

function newServer(): McpServer {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes its input', inputSchema: { text: z.string().max(1000) } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

async function handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const sessionId = req.headers['mcp-session-id'] as string | undefined;
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport!);
      },
    });
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
}

function listening(server: http.Server): void {
  server.keepAliveTimeout = 60_000;
  process.stdout.write(JSON.stringify({ port: (server.address() as { port: number }).port }) + '\n');
}

/** The raw echo: what answering a JSON-RPC message costs on node:http with nothing else. */
function echo(res: ServerResponse, message: { id?: unknown; method?: string; params?: { arguments?: { text?: unknown } } }): void {
  if (message.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  let result: unknown;
  if (message.method === 'initialize') {
    headers['mcp-session-id'] = randomUUID();
    result = { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'echo', version: '1.0.0' } };
  } else {
    result = { content: [{ type: 'text', text: String(message.params?.arguments?.text ?? '') }] };
  }
  res.writeHead(200, headers).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
}

if (process.argv.includes('--express')) {
  const app = createMcpExpressApp();
  app.all('/mcp', (req, res) => void handle(req, res, req.body));
  const server: http.Server = app.listen(0, '127.0.0.1', () => listening(server));
} else {
  const raw = process.argv.includes('--echo');
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    if (raw) echo(res, body ?? {});
    else await handle(req, res, body);
  });
  server.listen(0, '127.0.0.1', () => listening(server));
}
process.on('SIGTERM', () => process.exit(0));
