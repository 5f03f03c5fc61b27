/**
 * midas through the MCP pipeline with a real SDK client, on every database. midas is a roadmap
 * entry: these tests first see it listed without tools, then ship it the way the operator CLI
 * does (the surfaces table plus a surface.changed event) and call its tools.
 */
import { setSurfaceStatus } from '../../db/surfaces.js';
import { midas } from '../../mcp/products/midas/index.js';
import type { McpTestServer } from '../helpers/mcp.js';
import { connect, mcpTest, rawCall, grant } from '../helpers/mcp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertToolError, productSuite, type ProductEnv, type Tenant,
} from './product_suite.js';

const each = productSuite('midas');
const ALL = Object.keys(midas.scopes);
const READ = ['midas.api.read'];
const DAY = 86_400_000;
const today = () => Math.floor(Date.now() / DAY) * DAY;
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function ship(server: McpTestServer): Promise<void> {
  await setSurfaceStatus(server.db, 'midas', 'live');
  await server.events.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
}

/** The same sums get_usage reports, read straight from the counters. */
async function countersOf(env: ProductEnv, tenant: Tenant, from: number, to: number, endpointId?: string) {
  const query = env.server.db('midas_usage_daily').where({ tenant_id: env.server.tenants[tenant].id }).whereBetween('day', [from, to]);
  if (endpointId) query.where({ endpoint_id: endpointId });
  const rows: Array<{ day: number; calls: number; errors: number }> = await query;
  return { calls: rows.reduce((s, r) => s + Number(r.calls), 0), errors: rows.reduce((s, r) => s + Number(r.errors), 0), rows };
}

async function endpointOf(env: ProductEnv, tenant: Tenant, path: string) {
  return env.server.db('midas_endpoints').where({ tenant_id: env.server.tenants[tenant].id, path }).first();
}

mcpTest('midas is listed as roadmap with no tools until it ships; then its tools, resources and prompts are served', async (t, server) => {
  const inventoryOf = async () => (await (await fetch(`${server.mcpUrl}/`)).json()) as { products: Array<{ id: string; status: string; tool_count: number; scopes: unknown[] }> };
  const before = (await inventoryOf()).products.find((p) => p.id === 'midas')!;
  t.like(before, { status: 'roadmap', tool_count: 0, scopes: [] });
  const listBefore = (await (await fetch(`${server.mcpUrl}/midas/list_tools`)).json()) as { status: string; tools: unknown[] };
  t.deepEqual(listBefore, { product: 'midas', status: 'roadmap', tools: [] });
  const { token } = await grant(server, { product: 'midas', tenant: 'acme', scopes: READ });
  const refused = await rawCall(server, token, 'midas', 'tools/call', { name: 'midas.list_endpoints', arguments: {} });
  t.is(refused.body?.error?.data?.code, 'unknown_tool', 'a roadmap server accepts the session but serves no tool');

  await ship(server);
  const after = (await inventoryOf()).products.find((p) => p.id === 'midas')!;
  t.like(after, { status: 'live', tool_count: midas.tools.length });
  const listAfter = (await (await fetch(`${server.mcpUrl}/midas/list_tools`)).json()) as { status: string; tools: Array<{ name: string; required_scope: string; destructive: boolean; input_schema: unknown; description: string }> };
  t.is(listAfter.status, 'live');
  t.deepEqual(listAfter.tools.map((tool) => tool.name), ['midas.list_endpoints', 'midas.get_endpoint', 'midas.get_usage', 'midas.update_endpoint']);
  for (const tool of listAfter.tools) {
    t.true(tool.description.length > 80);
    t.truthy(tool.input_schema);
    t.regex(tool.required_scope, /^midas\.api\.(read|write)$/);
    t.false(tool.destructive);
  }
  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ALL });
  try {
    const listed = await client.listTools();
    t.is(listed.tools.length, midas.tools.length);
    const result = await client.callTool({ name: 'midas.list_endpoints', arguments: {} });
    t.false(result.isError === true);
    t.true((result.structuredContent as { endpoints: unknown[] }).endpoints.length >= 4);
  } finally {
    await close();
  }
});

each('every midas tool is refused with insufficient_scope without its scope', async (t, env) => {
  await ship(env.server);
  for (const tool of midas.tools) {
    await assertInsufficientScope(t, env, 'midas', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each("list_endpoints returns the tenant's endpoints with filters", async (t, env) => {
  await ship(env.server);
  const acme = await env.ok(t, 'acme', READ, 'midas.list_endpoints', {});
  t.true(acme.endpoints.some((e: any) => e.method === 'GET' && e.path === '/v1/quotes' && e.rate_limit_per_minute === 600));
  t.false(acme.endpoints.some((e: any) => e.path === '/v1/shipments'));
  const deprecated = await env.ok(t, 'globex', READ, 'midas.list_endpoints', { status: 'deprecated' });
  t.deepEqual(deprecated.endpoints, []);
  const posts = await env.ok(t, 'globex', READ, 'midas.list_endpoints', { method: 'POST' });
  t.deepEqual(posts.endpoints.map((e: any) => e.path), ['/v1/shipments']);
});

each('get_usage orders by_endpoint by calls, then path, then method: ties come out the same way every time', async (t, env) => {
  await ship(env.server);
  const tenant = env.server.tenants.acme.id;
  const day = Date.UTC(2003, 4, 7);
  // Stored in no particular order (ids neither by path nor by method), all with the same calls.
  const routes: Array<[string, string]> = [['PUT', '/v1/ties'], ['DELETE', '/v1/ties'], ['GET', '/v1/ties'], ['POST', '/v1/aaa-ties'], ['PATCH', '/v1/ties'], ['POST', '/v1/ties']];
  const ids = ['f', 'a', 'c', 'e', 'b', 'd'].map((c) => `00000000-0000-4000-8000-0000000000${c}${c}`);
  await env.server.db('midas_endpoints').insert(routes.map(([method, path], i) => ({
    id: ids[i], tenant_id: tenant, method, path, summary: null, status: 'active', rate_limit_per_minute: 60, created_at: day, updated_at: day,
  })));
  await env.server.db('midas_usage_daily').insert(ids.map((endpointId, i) => ({
    id: `00000000-0000-4000-8000-0000000001${String(i).padStart(2, '0')}`, tenant_id: tenant, endpoint_id: endpointId, day, calls: 7, errors: 0, p95_ms: null,
  })));
  const usage = await env.ok(t, 'acme', READ, 'midas.get_usage', { from: date(day), to: date(day) });
  t.deepEqual(usage.by_endpoint.map((e: any) => `${e.method} ${e.path}`), [
    'POST /v1/aaa-ties', 'DELETE /v1/ties', 'GET /v1/ties', 'PATCH /v1/ties', 'POST /v1/ties', 'PUT /v1/ties',
  ]);
});

each('get_usage sums the daily counters over the range, per endpoint and per day', async (t, env) => {
  await ship(env.server);
  const to = today();
  const from = to - 29 * DAY;
  const usage = await env.ok(t, 'globex', READ, 'midas.get_usage', {});
  const counted = await countersOf(env, 'globex', from, to);
  t.is(usage.from, date(from));
  t.is(usage.to, date(to));
  t.is(usage.totals.calls, counted.calls);
  t.is(usage.totals.errors, counted.errors);
  t.is(usage.totals.error_rate, Math.round((counted.errors / counted.calls) * 10_000) / 10_000);
  t.is(usage.by_day.length, 30);
  t.is(usage.by_day.reduce((s: number, d: any) => s + d.calls, 0), counted.calls);
  t.is(usage.by_endpoint.reduce((s: number, e: any) => s + e.calls, 0), counted.calls);
  t.deepEqual(usage.by_endpoint.map((e: any) => e.calls), [...usage.by_endpoint.map((e: any) => e.calls)].sort((a: number, b: number) => b - a));
  t.is(usage.by_endpoint[0].path, '/v1/shipments');

  const shipments = await endpointOf(env, 'globex', '/v1/shipments');
  const three = await env.ok(t, 'globex', READ, 'midas.get_usage', { endpoint_id: shipments.id, from: date(to - 2 * DAY), to: date(to) });
  const threeCounted = await countersOf(env, 'globex', to - 2 * DAY, to, shipments.id);
  t.deepEqual(three.by_day.map((d: any) => d.day), [date(to - 2 * DAY), date(to - DAY), date(to)]);
  t.deepEqual(three.by_day.map((d: any) => d.calls), [to - 2 * DAY, to - DAY, to].map((day) => Number(threeCounted.rows.find((r) => Number(r.day) === day)!.calls)));
  t.is(three.endpoint_id, shipments.id);
  t.deepEqual(three.by_endpoint.map((e: any) => e.endpoint_id), [shipments.id]);
  t.true(three.by_endpoint[0].worst_p95_ms >= 80);

  const empty = await env.ok(t, 'globex', READ, 'midas.get_usage', { from: '2001-01-01', to: '2001-01-02' });
  t.deepEqual(empty.totals, { calls: 0, errors: 0, error_rate: 0 });
  t.deepEqual(empty.by_day, [{ day: '2001-01-01', calls: 0, errors: 0 }, { day: '2001-01-02', calls: 0, errors: 0 }]);

  await assertInvalidArguments(t, env, 'globex', READ, 'midas.get_usage', { from: '2026-03-02', to: '2026-03-01' }, 'to');
  await assertInvalidArguments(t, env, 'globex', READ, 'midas.get_usage', { from: '2024-01-01', to: '2025-06-01' }, 'to');
  await assertInvalidArguments(t, env, 'globex', READ, 'midas.get_usage', { from: 'yesterday' }, 'from');
});

each('get_endpoint reports the last 30 days; update_endpoint deprecates and changes the rate limit', async (t, env) => {
  await ship(env.server);
  const endpoint = await endpointOf(env, 'acme', '/v1/deals/{id}');
  const read = await env.ok(t, 'acme', READ, 'midas.get_endpoint', { endpoint_id: endpoint.id });
  const counted = await countersOf(env, 'acme', today() - 29 * DAY, today(), endpoint.id);
  t.is(read.last_30_days.calls, counted.calls);
  t.is(read.last_30_days.errors, counted.errors);
  t.is(read.status, 'active');

  const updated = await env.ok(t, 'acme', ALL, 'midas.update_endpoint', { endpoint_id: endpoint.id, status: 'deprecated', rate_limit_per_minute: 60 });
  t.is(updated.status, 'deprecated');
  t.is(updated.rate_limit_per_minute, 60);
  t.is(updated.summary, 'Get a deal');
  const cleared = await env.ok(t, 'acme', ALL, 'midas.update_endpoint', { endpoint_id: endpoint.id, summary: null });
  t.is(cleared.summary, null);
  t.is(cleared.status, 'deprecated');
  await assertInvalidArguments(t, env, 'acme', ALL, 'midas.update_endpoint', { endpoint_id: endpoint.id, rate_limit_per_minute: 0 }, 'rate_limit_per_minute');
  await assertInvalidArguments(t, env, 'acme', ALL, 'midas.update_endpoint', { endpoint_id: endpoint.id, status: 'retired' }, 'status');
  t.is((await endpointOf(env, 'acme', '/v1/deals/{id}')).rate_limit_per_minute, 60);
  await assertToolError(t, env, 'acme', READ, 'midas.get_endpoint', { endpoint_id: '00000000-0000-4000-8000-000000000000' }, 'not_found');
});

each("another tenant's endpoint is forbidden_cross_tenant for every tool and the resource", async (t, env) => {
  await ship(env.server);
  const foreign = await endpointOf(env, 'globex', '/v1/inventory/{sku}');
  for (const tool of midas.tools) {
    if (!('endpoint_id' in tool.input)) continue;
    await assertCrossTenant(t, env, 'midas', 'acme', ALL, tool.name, { endpoint_id: foreign.id, ...(tool.name === 'midas.update_endpoint' ? { status: 'deprecated' } : {}) });
  }
  t.is((await endpointOf(env, 'globex', '/v1/inventory/{sku}')).status, 'active');
  const client = await env.client('acme', ALL);
  await t.throwsAsync(client.readResource({ uri: `portico://midas/endpoints/${foreign.id}` }), { message: /another organization/ });
});

each('the endpoint resource and the usage report prompt carry the tenant data', async (t, env) => {
  await ship(env.server);
  const client = await env.client('acme', ALL);
  const endpoint = await endpointOf(env, 'acme', '/v1/quotes');
  const resource = JSON.parse(((await client.readResource({ uri: `portico://midas/endpoints/${endpoint.id}` })).contents[0] as { text: string }).text);
  t.is(resource.path, '/v1/quotes');
  t.is(resource.usage.by_day.length, 30);
  t.is(resource.usage.totals.calls, (await countersOf(env, 'acme', today() - 29 * DAY, today(), endpoint.id)).calls);

  const prompt = await client.getPrompt({ name: 'midas.usage_report', arguments: { days: '7' } });
  const text = (prompt.messages[0].content as { text: string }).text;
  const week = await countersOf(env, 'acme', today() - 6 * DAY, today());
  t.regex(text, /Acme Corporation's public API/);
  t.true(text.includes(`Totals: ${week.calls} calls, ${week.errors} errors`));
  t.regex(text, /DELETE \/v0\/quotes\/\{id\} \(deprecated\)/);
  t.notRegex(text, /shipments/);
  await t.throwsAsync(client.getPrompt({ name: 'midas.usage_report', arguments: { days: 'a week' } }), { message: /days/ });
});

mcpTest('a client connected to midas before it ships sees no tools, is told when it ships, then sees them', async (t, server) => {
  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ALL });
  try {
    t.deepEqual((await client.listTools()).tools, []);
    t.deepEqual((await client.listPrompts()).prompts, []);
    const changed = new Promise<'notified'>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve('notified')));
    await ship(server);
    const outcome = await Promise.race([changed, new Promise<'silent'>((resolve) => setTimeout(() => resolve('silent'), 5_000))]);
    t.is(outcome, 'notified', 'notifications/tools/list_changed reached the connected session');
    const listed = await client.listTools();
    t.deepEqual(listed.tools.map((tool) => tool.name).sort(), midas.tools.map((tool) => tool.name).sort());
    const result = await client.callTool({ name: 'midas.list_endpoints', arguments: {} });
    t.not(result.isError, true);
  } finally {
    await close();
  }
});
