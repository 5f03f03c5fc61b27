/** The public documents of the MCP side: inventory, list_tools, Protected Resource Metadata, metrics. */
import test from 'ava';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { compileTool } from '../../mcp/schemas.js';
import { annotationsOf } from '../../shared/catalog.js';
import { VERSION } from '../../app.js';
import { connect, grant, mcpTest, startMcpServer } from '../helpers/mcp.js';
import { freePort } from '../helpers/server.js';

mcpTest('GET {mcp_url}/ lists every product with its status, tools, templates, prompts, scopes and metadata URL', async (t, server) => {
  const response = await fetch(`${server.mcpUrl}/`);
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.is(body.version, VERSION);
  t.deepEqual(body.mcp_protocol_versions, SUPPORTED_PROTOCOL_VERSIONS);
  t.deepEqual(body.products.map((p: any) => p.id), PRODUCTS.map((p) => p.id));
  for (const product of PRODUCTS) {
    const entry = body.products.find((p: any) => p.id === product.id);
    const live = server.portico.context && product.status === 'live';
    t.is(entry.title, product.title);
    t.is(entry.kind, product.kind);
    t.is(entry.url, `${server.mcpUrl}/${product.id}`);
    t.is(entry.status, product.status);
    t.is(entry.tool_count, live ? product.tools.length : 0);
    t.is(entry.resource_metadata_url, `${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/${product.id}`);
    if (live) {
      t.deepEqual(entry.scopes.map((s: any) => s.scope), Object.keys(product.scopes));
      t.deepEqual(entry.prompts.map((p: any) => p.name), product.prompts.map((p) => p.name));
      t.deepEqual(entry.resource_templates.map((r: any) => r.uri_template), product.resources.map((r) => `portico://${product.id}/${r.collection}/{id}`));
    } else {
      t.deepEqual([entry.scopes, entry.prompts, entry.resource_templates], [[], [], []]);
    }
  }
  const forge = body.products.find((p: any) => p.id === 'forge');
  t.deepEqual(forge.resource_templates.map((r: any) => r.uri_template), ['portico://forge/conversations/{id}', 'portico://forge/documents/{id}']);
  const midas = body.products.find((p: any) => p.id === 'midas');
  if (midas) t.deepEqual([midas.status, midas.tool_count], ['roadmap', 0]);
});

mcpTest('GET {mcp_url}/{product}/list_tools shows every tool with schema, scope, destructive flag and annotations', async (t, server) => {
  const response = await fetch(`${server.mcpUrl}/forge/list_tools`);
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.is(body.product, 'forge');
  const forge = PRODUCTS.find((p) => p.id === 'forge')!;
  t.deepEqual(body.tools.map((tool: any) => tool.name), forge.tools.map((tool) => tool.name));
  for (const tool of forge.tools) {
    const entry = body.tools.find((e: any) => e.name === tool.name);
    t.is(entry.title, tool.title);
    t.is(entry.description, tool.description);
    t.is(entry.required_scope, tool.scope);
    t.is(entry.destructive, tool.destructive);
    t.deepEqual(entry.input_schema, compileTool(forge, tool).inputSchema);
    t.deepEqual(entry.annotations, annotationsOf(tool));
  }
  const del = body.tools.find((e: any) => e.name === 'forge.delete_conversation');
  t.deepEqual([del.destructive, del.annotations.destructiveHint, del.input_schema.properties.confirmed.type], [true, true, 'boolean']);
  const unknown = await fetch(`${server.mcpUrl}/nosuch/list_tools`);
  t.is(unknown.status, 404);
  t.is(((await unknown.json()) as any).error.code, 'not_found');
  const post = await fetch(`${server.mcpUrl}/forge/list_tools`, { method: 'POST' });
  t.is(post.status, 405);
  t.is(((await post.json()) as any).error.code, 'method_not_allowed');
});

mcpTest('Protected Resource Metadata names exactly the product URL, the authorization server and the product scopes', async (t, server) => {
  for (const product of PRODUCTS.filter((p) => p.status === 'live')) {
    const response = await fetch(`${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/${product.id}`);
    t.is(response.status, 200);
    const body = (await response.json()) as any;
    t.is(body.resource, `${server.mcpUrl}/${product.id}`);
    t.deepEqual(body.authorization_servers, [server.config.authUrl]);
    t.deepEqual(body.scopes_supported, Object.keys(product.scopes));
    t.deepEqual(body.bearer_methods_supported, ['header']);
  }
  t.is((await fetch(`${new URL(server.mcpUrl).origin}/.well-known/oauth-protected-resource/mcp/nosuch`)).status, 404);
});

mcpTest('tool calls are counted by product and outcome on /metrics', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  await client.callTool({ name: 'forge.list_conversations', arguments: {} });
  await close();
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  t.regex(metrics, /portico_mcp_calls_total\{kind="tool",outcome="ok",product="forge"\} 1/);
  t.regex(metrics, /portico_mcp_call_duration_seconds_count\{kind="tool",outcome="ok",product="forge"\} 1/);
});

mcpTest('the group commit reports its records and batches by path on /metrics', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  // One after another: each call's record is its own batch. The first takes the head lock; on
  // PostgreSQL the writer then knows the head, and the next two are one statement each.
  for (let i = 0; i < 3; i += 1) await client.callTool({ name: 'forge.list_conversations', arguments: {} });
  await close();
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(metrics)?.[1]);
  t.is(value('portico_audit_records_total'), 3);
  const postgres = server.database.kind === 'postgres';
  t.deepEqual(
    ['statement', 'transaction', 'retried'].map((path) => value(`portico_audit_batches_total{path="${path}"}`)),
    postgres ? [2, 1, 0] : [0, 3, 0],
  );
  t.regex(metrics, /# TYPE portico_audit_batches_total counter/);
});

mcpTest('MCP lists only what the grant’s scopes allow; resources and prompts are scope-checked like tools', async (t, server) => {
  const reader = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.documents.read'] });
  try {
    const tools = await reader.client.listTools();
    t.deepEqual(tools.tools.map((tool) => tool.name), ['forge.analyze_document']);
    t.deepEqual(tools.tools[0].annotations, annotationsOf(PRODUCTS.find((p) => p.id === 'forge')!.tools.find((x) => x.name === 'forge.analyze_document')!));
    const templates = await reader.client.listResourceTemplates();
    t.deepEqual(templates.resourceTemplates.map((r) => r.uriTemplate), ['portico://forge/documents/{id}']);
    t.deepEqual((await reader.client.listPrompts()).prompts, []);
  } finally {
    await reader.close();
  }
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.documents.read'] });
  const { rawCall } = await import('../helpers/mcp.js');
  const conversation = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).first('id');
  const read = await rawCall(server, token, 'forge', 'resources/read', { uri: `portico://forge/conversations/${conversation.id}` });
  t.is(read.status, 403);
  t.regex(read.headers.get('www-authenticate') ?? '', /scope="forge\.chat\.read"/);
  const prompt = await rawCall(server, token, 'forge', 'prompts/get', { name: 'forge.summarize_conversation', arguments: { conversation_id: conversation.id } });
  t.is(prompt.status, 403);
  t.is(prompt.body.error.data.code, 'insufficient_scope');
});

mcpTest('a mistyped server name gets 404 not_found naming the servers there are, at every URL of a server', async (t, server) => {
  const origin = new URL(server.mcpUrl).origin;
  const servers = PRODUCTS.map((p) => p.id).join(', ');
  for (const [method, path, name] of [
    ['POST', '/mcp/forg', 'forg'], ['GET', '/mcp/forg/', 'forg'], ['GET', '/mcp/Forge/list_tools', 'Forge'],
    ['GET', '/mcp/forg/client_config', 'forg'], ['GET', '/.well-known/oauth-protected-resource/mcp/forg', 'forg'],
  ]) {
    const response = await fetch(`${origin}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
    t.is(response.status, 404, `${method} ${path}`);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    t.is(error.code, 'not_found');
    t.is(error.message, `no MCP server named "${name}"; the servers are ${servers} (GET ${server.mcpUrl}/ lists them)`);
  }
  // Paths not shaped like a server's URL are no route at all; real servers answer as ever.
  for (const path of ['/mcp/forge/nothing', '/mcp/forg/nothing', '/elsewhere']) {
    const response = await fetch(`${origin}${path}`);
    t.is(response.status, 404, path);
    t.regex(((await response.json()) as { error: { message: string } }).error.message, /^no route for GET /, path);
  }
  t.is((await fetch(`${server.mcpUrl}/forge/list_tools`)).status, 200);
});

// The console answers inside the MCP path when PUBLIC_API_URL is the MCP URL ({api_url}/mcp is
// /mcp/mcp): its pages and metadata are not taken for a mistyped server. Routing only: SQLite.
test('with the console inside the MCP path, its pages and metadata answer; only other names are mistyped servers', async (t) => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = await startMcpServer('sqlite', { env: { PORT: String(port), PUBLIC_AUTH_URL: origin, PUBLIC_API_URL: `${origin}/mcp` } });
  try {
    t.is(server.config.apiUrl, `${origin}/mcp`);
    const page = await fetch(`${origin}/mcp/mcp/login`);
    t.is(page.status, 200);
    t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
    const metadata = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp/mcp`);
    t.is(metadata.status, 200);
    t.like(await metadata.json(), { resource: `${origin}/mcp/mcp`, resource_name: 'Portico console API' });
    const mistyped = await fetch(`${origin}/mcp/mcpp`);
    t.is(mistyped.status, 404);
    t.regex(((await mistyped.json()) as { error: { message: string } }).error.message, /^no MCP server named "mcpp"/);
  } finally {
    await server.close();
  }
});
