/**
 * The names SPEC.md fixes, pinned where the catalog declares them, so that a rename or removal
 * fails here by the spec's words rather than somewhere in a product's own tests: the ten servers
 * of part 1.5 in its order with their kinds (midas a roadmap entry), the tools, parameters,
 * prompt, scopes and resource URI form of parts 2 and 5, the three kinds of capability of part
 * 1.3, and part 5.8's read-only review sessions. The public catalog (part 4) is checked for every
 * server, not only forge.
 */
import test from 'ava';
import { z } from 'zod';
import { PRODUCTS } from '../../mcp/products/index.js';
import { compileTool } from '../../mcp/schemas.js';
import { SCOPE_FORM } from '../../shared/catalog.js';
import { mcpTest } from '../helpers/mcp.js';

/** SPEC.md part 1.5, row by row. */
const SERVERS: Array<[string, string]> = [
  ['forge', 'AI chat, content, document analysis'],
  ['cavalier', 'Operations: quotes, deals, statements of work'],
  ['aegis', 'Security posture scans and findings'],
  ['harvest', 'Salvage and intelligence'],
  ['reclaim', 'Recovery policies'],
  ['herald', 'Broadcasts and trust-center'],
  ['terrain', 'Domain workflows'],
  ['people', 'Profiles and lifecycle'],
  ['pawvault', 'Pet records (direct-to-consumer)'],
  ['midas', 'Roadmap entry: its tools appear only when the public-API surface ships'],
];

const product = (id: string) => PRODUCTS.find((p) => p.id === id)!;
const tool = (name: string) => product(name.split('.')[0])?.tools.find((t) => t.name === name);

test('the ten servers of SPEC part 1.5, in its order, with its kinds; midas is a roadmap entry', (t) => {
  t.deepEqual(PRODUCTS.map((p) => [p.id, p.kind]), SERVERS);
  t.deepEqual(PRODUCTS.filter((p) => p.status !== 'live').map((p) => [p.id, p.status]), [['midas', 'roadmap']]);
});

test('the tool names SPEC part 2 shows exist, with the scopes part 5 names', (t) => {
  for (const name of ['aegis.list_scans', 'aegis.list_findings', 'forge.create_conversation', 'cavalier.create_quote']) t.truthy(tool(name), name);
  t.is(tool('aegis.list_scans')?.scope, 'aegis.scans.read');
  t.is(tool('forge.create_conversation')?.scope, 'forge.chat.write');
  t.false(tool('aegis.list_scans')?.destructive);
  t.false(tool('aegis.list_findings')?.destructive);
  for (const scope of ['aegis.scans.read', 'forge.chat.read', 'forge.chat.write']) {
    t.truthy(product(scope.split('.')[0]).scopes[scope], `${scope} is declared`);
    t.regex(scope, SCOPE_FORM);
  }
});

test('aegis.list_findings takes { severity: "high" } and refuses a severity that is not a string', (t) => {
  const aegis = product('aegis');
  const compiled = compileTool(aegis, tool('aegis.list_findings')!);
  const severity = (compiled.inputSchema.properties as Record<string, { type?: string; enum?: string[] }>).severity;
  t.is(severity?.type, 'string');
  t.true(severity?.enum?.includes('high'));
  const schema = z.object(tool('aegis.list_findings')!.input).strict();
  t.true(schema.safeParse({ severity: 'high' }).success);
  t.false(schema.safeParse({ severity: 3 }).success);
});

test('forge.summarize_conversation is a prompt, and a conversation is a resource at <scheme>://forge/conversations/{id}', (t) => {
  const forge = product('forge');
  t.truthy(forge.prompts.find((p) => p.name === 'forge.summarize_conversation'));
  t.truthy(forge.resources.find((r) => r.collection === 'conversations'));
});

test('every server offers tools, resources and prompts (SPEC part 1.3)', (t) => {
  for (const p of PRODUCTS) {
    t.true(p.tools.length > 0, `${p.id}: tools`);
    t.true(p.resources.length > 0, `${p.id}: resources`);
    t.true(p.prompts.length > 0, `${p.id}: prompts`);
  }
});

test("a read-only scope set reaches every read tool, every resource and every prompt of its server (SPEC part 5.8)", (t) => {
  for (const p of PRODUCTS) {
    const readOnly = new Set(Object.keys(p.scopes).filter((scope) => scope.endsWith('.read')));
    t.true(readOnly.size > 0, `${p.id} has read scopes`);
    for (const resource of p.resources) t.true(readOnly.has(resource.scope), `${p.id}.${resource.collection} needs ${resource.scope}`);
    for (const prompt of p.prompts) t.true(readOnly.has(prompt.scope), `${prompt.name} needs ${prompt.scope}`);
    for (const entry of p.tools.filter((x) => x.scope.endsWith('.read'))) t.false(entry.destructive, `${entry.name} is read-only`);
    t.true(p.tools.some((x) => readOnly.has(x.scope)), `${p.id}: a review session can call something`);
  }
});

mcpTest('GET {mcp_url}/{product}/list_tools carries description, JSON Schema, required scope and destructive flag for every tool of every live server', async (t, server) => {
  for (const p of PRODUCTS.filter((x) => x.status === 'live')) {
    const response = await fetch(`${server.mcpUrl}/${p.id}/list_tools`);
    t.is(response.status, 200, p.id);
    const body = (await response.json()) as { product: string; tools: Array<Record<string, any>> };
    t.is(body.product, p.id);
    t.deepEqual(body.tools.map((entry) => entry.name), p.tools.map((x) => x.name), p.id);
    for (const declared of p.tools) {
      const entry = body.tools.find((e) => e.name === declared.name)!;
      t.is(entry.description, declared.description, declared.name);
      t.deepEqual(entry.input_schema, compileTool(p, declared).inputSchema, declared.name);
      t.is(entry.input_schema.type, 'object', declared.name);
      t.is(entry.required_scope, declared.scope, declared.name);
      t.is(entry.destructive, declared.destructive, declared.name);
      if (declared.destructive) t.is(entry.input_schema.properties.confirmed?.type, 'boolean', `${declared.name} accepts confirmed`);
    }
  }
}, {}, ['sqlite']);
