/**
 * Property-based fuzzing with fast-check (checklist R9, I7, J3): generated JSON-RPC messages
 * against a live MCP server, and generated requests against the REST surfaces (OAuth endpoints,
 * console API, inventory, list_tools, metadata). Properties, for every case: no 5xx, the server
 * still answers, and any change to the product's data comes with an `ok` audit record of that
 * very request. Bounded: a few hundred cases per database, each with a small body.
 */
import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { issueAccessToken } from '../helpers/grants.js';
import { grant, MCP_HEADERS, mcpTest, openSession, readRaw, type McpTestServer } from '../helpers/mcp.js';
import { sample } from '../helpers/schema_sample.js';
import { z } from 'zod';

const forge = PRODUCTS.find((p) => p.id === 'forge')!;
const FORGE_TABLES = ['forge_conversations', 'forge_messages', 'forge_content', 'forge_documents'];
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

/** A digest of every row of forge's tables, both tenants: any write shows. */
async function fingerprint(server: McpTestServer): Promise<string> {
  const hash = createHash('sha256');
  for (const table of FORGE_TABLES) hash.update(JSON.stringify(await server.db(table).orderBy('id').select()));
  return hash.digest('hex');
}

const anyJson = fc.jsonValue({ maxDepth: 3 });
const idLike = (id: string) => fc.constantFrom(id, id.toUpperCase(), ` ${id}`, id.replace(/-/g, '%2D'), randomUUID(), '', '../../etc', "' or 1=1 --", '%00');

function messages(ids: string[]) {
  const argName = fc.constantFrom(...new Set(forge.tools.flatMap((tool) => Object.keys(tool.input))), 'confirmed', 'tenant_id', '__proto__x', 'constructor');
  const argValue = fc.oneof(anyJson, fc.constantFrom(...ids).chain(idLike), fc.string({ maxLength: 300 }), fc.boolean());
  const args = fc.oneof(fc.dictionary(argName, argValue, { maxKeys: 5 }), anyJson);
  const toolName = fc.oneof(fc.constantFrom(...forge.tools.map((t) => t.name)), fc.constantFrom('aegis.list_scans', '', 'forge.', 'FORGE.LIST_CONVERSATIONS'), fc.string({ maxLength: 40 }));
  const method = fc.oneof(
    fc.constantFrom('tools/call', 'tools/call', 'tools/call', 'tools/list', 'resources/read', 'resources/templates/list', 'prompts/get', 'prompts/list', 'ping', 'notifications/cancelled', 'completion/complete', 'logging/setLevel'),
    fc.string({ maxLength: 30 }),
  );
  const params = fc.oneof(
    fc.record({ name: toolName, arguments: args }, { requiredKeys: [] }),
    fc.record({ uri: fc.oneof(fc.constantFrom(...ids).map((id) => `portico://forge/conversations/${id}`), fc.string({ maxLength: 80 })) }),
    fc.record({ name: fc.constantFrom('forge.summarize_conversation', 'x'), arguments: fc.dictionary(fc.constantFrom('conversation_id', 'x'), fc.oneof(fc.string(), fc.constantFrom(...ids))) }),
    anyJson,
  );
  const message = fc.record({ jsonrpc: fc.constantFrom('2.0', '2.0', '2.0', '1.0', 2), id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), anyJson), method, params }, { requiredKeys: ['jsonrpc', 'method'] });
  // Plausible calls: valid arguments for a real tool (so many succeed and write), one field perhaps replaced.
  const plausible = fc.tuple(fc.constantFrom(...forge.tools), fc.constantFrom(...ids), fc.option(fc.tuple(argName, argValue)), fc.integer({ min: 1, max: 1e6 }))
    .map(([tool, id, override, n]) => {
      const valid = sample(z.toJSONSchema(z.object(tool.input)) as Record<string, any>) as Record<string, unknown>;
      for (const key of Object.keys(valid)) if (key.endsWith('_id')) valid[key] = id;
      const args = override ? { ...valid, [override[0]]: override[1] } : valid;
      return JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: tool.name, arguments: args } });
    });
  return fc.oneof(
    { weight: 6, arbitrary: plausible },
    { weight: 6, arbitrary: message.map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  );
}

mcpTest('fuzz: generated JSON-RPC messages never get a 5xx, and every change to data is audited by its own request', async (t, server) => {
  t.timeout(240_000);
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: Object.keys(forge.scopes) });
  const sessionId = await openSession(server, token, 'forge');
  const ids = (await server.db('forge_conversations').select('id')).map((r: { id: string }) => r.id);
  const headers = { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  let cases = 0;
  let changed = 0;
  await fc.assert(fc.asyncProperty(messages(ids), async (body) => {
    cases += 1;
    const requestId = `fuzz-${randomUUID()}`;
    const before = await fingerprint(server);
    const response = await readRaw(await fetch(`${server.mcpUrl}/forge`, { method: 'POST', headers: { ...headers, 'x-request-id': requestId }, body }));
    if (response.status >= 500) throw new Error(`${response.status} for ${body.slice(0, 300)}: ${response.text.slice(0, 300)}`);
    if (response.messages.some((m) => m?.error?.data?.code === 'internal')) throw new Error(`internal for ${body.slice(0, 300)}: ${response.text.slice(0, 300)}`);
    if ((await fingerprint(server)) !== before) {
      changed += 1;
      const audited = await server.db('audit_log').where({ request_id: requestId, outcome: 'ok', kind: 'tool' }).first();
      if (!audited) throw new Error(`data changed without an ok audit record of this request: ${body.slice(0, 300)}`);
    }
  }), { numRuns: RUNS });
  t.log(`${cases} messages, ${changed} of them changed data (each audited)`);
  const globex = await server.db('audit_log').where({ tenant_id: server.tenants.globex.id }).where('request_id', 'like', 'fuzz-%').count({ n: '*' }).first();
  t.is(Number(globex?.n), 0, 'nothing of the fuzz landed in the other tenant');
  t.is((await fetch(`${server.url}/healthz`)).status, 200);
}, { env: { RATE_LIMIT_PER_MINUTE: '1000000' } });

mcpTest('fuzz: generated requests to the OAuth endpoints, the console API and the public MCP documents never get a 5xx', async (t, server) => {
  t.timeout(240_000);
  const consoleToken = (await issueAccessToken(server.db, {
    tenantId: server.tenants.acme.id, userId: server.users['member@acme.example'], product: 'console', resource: `${server.config.apiUrl}/mcp`,
    scopes: ['console.connections.read', 'console.connections.write', 'console.audit.read'],
  })).token;
  const victim = await grant(server, { product: 'forge', tenant: 'globex', scopes: ['forge.chat.read'] });
  const revokedBefore = Number((await server.db('connections').whereNotNull('revoked_at').count({ n: '*' }).first())?.n);
  const text = fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom('', 'authorization_code', 'refresh_token', 'S256', 'plain', 'none', victim.connection.id, victim.connection.id.toUpperCase(), 'http://127.0.0.1/callback', `${server.mcpUrl}/forge`, 'forge.chat.read', '%00', '../', 'a'.repeat(2000)));
  const form = fc.dictionary(fc.constantFrom('grant_type', 'code', 'refresh_token', 'client_id', 'redirect_uri', 'code_verifier', 'resource', 'scope', 'token', 'token_type_hint', 'client_secret', 'x'), text, { maxKeys: 6 });
  const segment = fc.oneof(fc.constantFrom('forge', 'midas', 'nope', '', '..', '%2e%2e', 'FORGE', 'forge%00'), fc.string({ maxLength: 20 }).map(encodeURIComponent));
  const request = fc.oneof(
    form.map((f) => ({ method: 'POST', path: '/oauth/token', type: 'application/x-www-form-urlencoded', body: new URLSearchParams(f).toString() })),
    form.map((f) => ({ method: 'POST', path: fc.sample(fc.constantFrom('/oauth/revoke', '/oauth/introspect'), 1)[0], type: 'application/x-www-form-urlencoded', body: new URLSearchParams(f).toString() })),
    form.map((f) => ({ method: 'GET', path: `/oauth/authorize?${new URLSearchParams(f)}` })),
    fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.dictionary(fc.constantFrom('redirect_uris', 'client_name', 'scope', 'grant_types', 'token_endpoint_auth_method', 'jwks', 'client_id'), fc.jsonValue({ maxDepth: 2 }))).map((v) => ({ method: 'POST', path: '/oauth/register', type: 'application/json', body: JSON.stringify(v) })),
    fc.tuple(fc.constantFrom('GET', 'DELETE', 'POST'), text).map(([method, id]) => ({ method, path: `/api/mcp/v1/connections/${encodeURIComponent(id)}`, bearer: consoleToken })),
    form.map((f) => ({ method: 'GET', path: `/api/mcp/v1/audit?${new URLSearchParams(Object.fromEntries(Object.entries(f).map(([k, v], i) => [['product', 'tool', 'client', 'connection', 'outcome', 'kind', 'from', 'to', 'limit', 'cursor'][i % 10] ?? k, v])))}`, bearer: consoleToken })),
    fc.tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'), segment).map(([method, s]) => ({ method, path: `/mcp/${s}/list_tools` })),
    segment.map((s) => ({ method: 'GET', path: `/.well-known/oauth-protected-resource/mcp/${s}` })),
    fc.constantFrom({ method: 'GET', path: '/mcp/' }, { method: 'POST', path: '/mcp/' }, { method: 'GET', path: '/api/mcp/v1/audit/verify', bearer: consoleToken }),
  );
  let cases = 0;
  await fc.assert(fc.asyncProperty(request, async (r: { method: string; path: string; type?: string; body?: string; bearer?: string }) => {
    cases += 1;
    const headers: Record<string, string> = {};
    if (r.type) headers['content-type'] = r.type;
    if (r.bearer) headers.authorization = `Bearer ${r.bearer}`;
    const response = await fetch(`${server.url}${r.path}`, { method: r.method, headers, body: r.method === 'GET' ? undefined : r.body, redirect: 'manual' });
    const body = await response.text();
    if (response.status >= 500) throw new Error(`${response.status} for ${r.method} ${r.path.slice(0, 200)} ${r.body?.slice(0, 200) ?? ''}: ${body.slice(0, 300)}`);
  }), { numRuns: RUNS });
  t.log(`${cases} requests`);
  const revokedAfter = Number((await server.db('connections').whereNotNull('revoked_at').count({ n: '*' }).first())?.n);
  t.is(revokedAfter, revokedBefore, 'a member of acme revoked nothing (least of all globex’s connection)');
  t.is((await fetch(`${server.url}/healthz`)).status, 200);
});
