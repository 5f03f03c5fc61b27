/**
 * Test helpers for the MCP servers: a real Portico on 127.0.0.1 with the demo dataset, SDK clients
 * holding real bearer tokens, and raw JSON-RPC over HTTP for asserting statuses and headers.
 *
 *   const server = await startMcpServer(kind);                      // acme + globex, demo rows of every product
 *   const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
 *   const result = await client.callTool({ name: 'forge.list_conversations', arguments: {} });
 *   const raw = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.add_message', arguments: {...} });
 *   t.is(raw.status, 403); t.regex(raw.headers.get('www-authenticate')!, /insufficient_scope/);
 *   await close(); await server.close();
 *
 *   mcpTest('title', async (t, server) => { ... });                  // once per database, server closed after
 *
 * Tokens come from test/helpers/grants.ts (the grant store in the adapter's format): these tests
 * are about the resource servers, not OAuth. Users: admin@acme.example, member@acme.example,
 * admin@globex.example, member@globex.example, multi@example.com (both), password DEMO_PASSWORD.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ElicitRequestSchema, LATEST_PROTOCOL_VERSION, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema, type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { seedDemoIfEmpty } from '../../db/demo.js';
import { hashNewPassword, type HashedPassword } from '../../db/accounts.js';
import type { Db } from '../../db/connect.js';
import type { DbConnectionRow } from '../../db/grant_store.js';
import type { DbAuditRow } from '../../db/audit.js';
import { defaultMounts, defaultSeeders } from '../../mounts.js';
import { EventBus } from '../../shared/events.js';
import type { ProductDefinition, ProductStatus } from '../../shared/catalog.js';
import type { Mount } from '../../app.js';
import test, { type ExecutionContext } from 'ava';
import { databasesUnderTest, filledOnce, type DbKind, type TestDatabase } from './db.js';
import { issueAccessToken } from './grants.js';
import { rememberSecret } from './secrets.js';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';

export const DEMO_PASSWORD = 'demo-password-1234';
rememberSecret(DEMO_PASSWORD);

let demoHash: Promise<HashedPassword> | undefined;

/** Seeds the demo dataset (every account's password DEMO_PASSWORD, hashed once per worker process). */
export async function seedDemo(db: Db): Promise<void> {
  await seedDemoIfEmpty(db, { password: DEMO_PASSWORD, hashed: await (demoHash ??= hashNewPassword(DEMO_PASSWORD)), seeders: defaultSeeders() });
}

/**
 * Makes a database holding the demo dataset for each server mcpTest starts: seeded once per test
 * file and copied, as seeding ran ~470 statements for every test (40-150 ms on SQLite, 300-850 ms
 * on PostgreSQL). Made by the first mcpTest: filledOnce declares a hook, which ava takes only while
 * a test file declares its tests (a helper module's own code can run before a slower import of
 * the file has finished).
 */
let demoDatabase: ((kind: DbKind) => Promise<TestDatabase>) | undefined;

export interface McpTestServer extends TestServer {
  db: Db;
  mcpUrl: string;
  tenants: Record<'acme' | 'globex', { id: string; slug: string }>;
  /** User ids by e-mail. */
  users: Record<string, string>;
  /** The event bus every part of this server shares (publish connection.revoked on it). */
  events: EventBus;
}

export interface McpServerOptions extends TestServerOptions {
  /** The catalog to serve (default: every real product). */
  products?: readonly ProductDefinition<any>[];
  /** Mounts to run before the default ones (e.g. a test-only table). */
  before?: Mount[];
  /** How often the MCP host looks for revocations it was not told about (default REVOKED_SWEEP_MS). */
  revokedSweepMs?: number;
}

/** A real server with tenants acme and globex, their users and every product's demo rows. */
export async function startMcpServer(kind: DbKind, options: McpServerOptions = {}): Promise<McpTestServer> {
  const events = new EventBus();
  const { products, before = [], revokedSweepMs, ...serverOptions } = options;
  const server = await startTestServer(kind, { mounts: [...before, ...defaultMounts({ events, products, revokedSweepMs })], newDatabase: demoDatabase, ...serverOptions });
  const db = server.portico.context.db;
  // Seeds a database that is still empty (one the caller gave, or one of its own outside mcpTest).
  await seedDemo(db);
  const tenantRows: Array<{ id: string; slug: string }> = await db('tenants').select('id', 'slug');
  const userRows: Array<{ id: string; email: string }> = await db('users').select('id', 'email');
  const bySlug = Object.fromEntries(tenantRows.map((t) => [t.slug, t]));
  return Object.assign(server, {
    db,
    events,
    mcpUrl: server.config.mcpUrl,
    tenants: { acme: bySlug.acme, globex: bySlug.globex },
    users: Object.fromEntries(userRows.map((u) => [u.email, u.id])),
  });
}

/**
 * Makes the sessions of `product` hear tools/prompts/resources list_changed, leaving its surface at
 * `status`: the surface moves away and back, as sessions are told of moves only (a repeated event
 * is announced once).
 */
export async function blinkSurface(server: McpTestServer, product: string, status: ProductStatus): Promise<void> {
  await server.events.publish({ type: 'surface.changed', product, status: status === 'live' ? 'roadmap' : 'live' });
  await server.events.publish({ type: 'surface.changed', product, status });
}

/** How many list_changed notifications of each kind a client heard. */
export interface ListsChanged { tools: number; prompts: number; resources: number }

/**
 * An SDK client of one product server (`url`) that counts the list_changed notifications it
 * hears; `streaming` resolves once its GET stream, which carries them, is up (a notification sent
 * before has nowhere to go).
 */
export async function connectCountingChanges(url: string, token: string): Promise<{ client: Client; told: ListsChanged; streaming: Promise<void> }> {
  const client = new Client({ name: 'portico-test', version: '1.0.0' });
  const told: ListsChanged = { tools: 0, prompts: 0, resources: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (told.tools += 1));
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => void (told.prompts += 1));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void (told.resources += 1));
  let streamUp!: () => void;
  const streaming = new Promise<void>((resolve) => (streamUp = resolve));
  const seeingStream: FetchLike = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'GET' && response.ok) streamUp();
    return response;
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: seeingStream, requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return { client, told, streaming };
}

export interface GrantOptions {
  product: string;
  tenant: 'acme' | 'globex';
  /** Defaults to admin@<tenant>.example. */
  user?: string;
  scopes: string[];
  /** Issue the token for another resource than the product (e.g. to test audience checks). */
  resource?: string;
  clientId?: string;
  ttlSeconds?: number;
}

/** A bearer token (and its connection) for one product, tenant, user and set of scopes. */
export async function grant(server: McpTestServer, options: GrantOptions): Promise<{ token: string; connection: DbConnectionRow }> {
  const email = options.user ?? `admin@${options.tenant}.example`;
  const userId = server.users[email];
  if (!userId) throw new Error(`no demo user ${email}`);
  return issueAccessToken(server.db, {
    tenantId: server.tenants[options.tenant].id, userId, product: options.product,
    resource: options.resource ?? `${server.mcpUrl}/${options.product}`, scopes: options.scopes, clientId: options.clientId, ttlSeconds: options.ttlSeconds,
  });
}

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  token: string;
  connection: DbConnectionRow;
  close(): Promise<void>;
}

/**
 * An MCP SDK Client connected to `{mcp_url}/{product}` with a fresh grant. With `elicit`, the
 * client declares the elicitation capability and answers every elicitation/create with it.
 */
export async function connect(
  server: McpTestServer,
  options: GrantOptions & { token?: string; elicit?: (message: string) => ElicitResult | Promise<ElicitResult> },
): Promise<Connected> {
  const issued = options.token ? { token: options.token, connection: undefined as unknown as DbConnectionRow } : await grant(server, options);
  const transport = new StreamableHTTPClientTransport(new URL(`${server.mcpUrl}/${options.product}`), {
    requestInit: { headers: { Authorization: `Bearer ${issued.token}` } },
  });
  const client = new Client({ name: 'portico-test', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: { form: {} } } : {} });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params.message));
  }
  await client.connect(transport);
  return { client, transport, token: issued.token, connection: issued.connection, close: () => client.close() };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  /** The JSON-RPC message answering the call (from a JSON body or the SSE stream), or the JSON body. */
  body: any;
  /** Every JSON-RPC message of an SSE reply, in order. */
  messages: any[];
  text: string;
  sessionId?: string;
}

/** Parses a Response: JSON, or the `data:` lines of an SSE stream. */
export async function readRaw(response: Response, id?: unknown): Promise<RawResponse> {
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let messages: any[] = [];
  let body: any;
  if (type.startsWith('text/event-stream')) {
    messages = text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
    body = messages.find((m) => m.id === id && ('result' in m || 'error' in m)) ?? messages.at(-1);
  } else if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: response.status, headers: response.headers, body, messages, text, sessionId: response.headers.get('mcp-session-id') ?? undefined };
}

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** POSTs any body to a product endpoint with a token (or none), as a client would. */
export async function rawPost(server: McpTestServer, product: string, init: { token?: string; body: string; headers?: Record<string, string>; sessionId?: string }, id?: unknown): Promise<RawResponse> {
  const headers: Record<string, string> = { ...MCP_HEADERS, ...(init.headers ?? {}) };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.sessionId) {
    headers['mcp-session-id'] = init.sessionId;
    headers['mcp-protocol-version'] ??= LATEST_PROTOCOL_VERSION;
  }
  return readRaw(await fetch(`${server.mcpUrl}/${product}`, { method: 'POST', headers, body: init.body }), id);
}

/** Opens an MCP session with raw HTTP (initialize + initialized); returns its id. */
export async function openSession(server: McpTestServer, token: string, product: string): Promise<string> {
  const init = await rawPost(server, product, {
    token,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  }, 0);
  if (init.status !== 200 || !init.sessionId) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  const initialized = await rawPost(server, product, { token, sessionId: init.sessionId, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  if (initialized.status !== 202) throw new Error(`initialized failed: ${initialized.status} ${initialized.text}`);
  return init.sessionId;
}

/**
 * One JSON-RPC request over raw HTTP, for asserting statuses and headers (401, 403 …). Without a
 * sessionId it first opens a session with the same token (which must then be valid for `product`).
 */
export async function rawCall(
  server: McpTestServer, token: string | undefined, product: string, method: string, params: unknown,
  options: { sessionId?: string; id?: string | number; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const id = options.id ?? 1;
  const sessionId = options.sessionId ?? (token && method !== 'initialize' ? await openSession(server, token, product).catch(() => undefined) : undefined);
  return rawPost(server, product, { token, sessionId, headers: options.headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) }, id);
}

/** The MCP sessions open on the server, as its /metrics counts them: reading them touches none. */
export async function openSessions(server: McpTestServer): Promise<number> {
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^portico_mcp_sessions (\d+)$/m.exec(metrics)?.[1]);
}

/** The audit records of a tenant, oldest first. */
export async function auditOf(server: McpTestServer, tenant: 'acme' | 'globex', filter: Partial<Pick<DbAuditRow, 'name' | 'kind' | 'connection_id' | 'outcome' | 'user_id' | 'product'>> = {}): Promise<DbAuditRow[]> {
  return server.db<DbAuditRow>('audit_log').where({ tenant_id: server.tenants[tenant].id, ...filter }).orderBy('seq');
}

/** Registers `title [sqlite]` and `title [postgres]`, each with its own server (see startMcpServer). */
export function mcpTest(title: string, body: (t: ExecutionContext, server: McpTestServer) => Promise<void>, options: McpServerOptions = {}, kinds = databasesUnderTest()): void {
  demoDatabase ??= filledOnce(seedDemo);
  for (const kind of kinds) {
    test(`${title} [${kind}]`, async (t) => {
      const server = await startMcpServer(kind, options);
      try {
        await body(t, server);
      } finally {
        await server.close();
      }
    });
  }
}

/** `title [postgres]` only (row locks held across concurrent writers); declared skipped when PostgreSQL is not under test. */
export function mcpPostgresTest(title: string, body: (t: ExecutionContext, server: McpTestServer) => Promise<void>): void {
  if (databasesUnderTest().includes('postgres')) mcpTest(title, body, {}, ['postgres']);
  else test.skip(`${title} [postgres]`, () => {});
}
