/**
 * The baseline: a bare @modelcontextprotocol/sdk server doing the same kind of tool call with no
 * auth, no tenant check and no audit. Stateful Streamable HTTP on node:http, one trivial tool.
 * Prints `{ "port": N }` when listening.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const jsonResponse = process.argv.includes('--json');
const transports = new Map<string, StreamableHTTPServerTransport>();

function newServer(): McpServer {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes its input', inputSchema: { text: z.string().max(1000) } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const sessionId = req.headers['mcp-session-id'] as string | undefined;
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: jsonResponse,
      onsessioninitialized: (id) => {
        transports.set(id, transport!);
      },
    });
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
httpServer.keepAliveTimeout = 60_000;
httpServer.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (httpServer.address() as { port: number }).port }) + '\n');
});
process.on('SIGTERM', () => process.exit(0));
