/**
 * Conventions are tests (STYLE.md §8): invariants over every tool, resource and prompt of every
 * product in PRODUCTS, and a snapshot of every tool's input schema as the model sees it, so a
 * change to what the model sees shows up in review (`npx ava --update-snapshots` to accept one).
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { PRODUCTS } from '../../mcp/products/index.js';
import { compileTool } from '../../mcp/schemas.js';
import { annotationsOf, SCOPE_FORM, TOOL_NAME_FORM, type ToolDefinition } from '../../shared/catalog.js';
import { testOnEachDatabase } from '../helpers/db.js';
import { PROJECT_ROOT as ROOT } from '../../scripts/project_root.js';

const PRODUCT_ID = /^[a-z][a-z0-9]*$/;

function isTool(value: unknown): value is ToolDefinition {
  return !!value && typeof value === 'object' && typeof (value as ToolDefinition).name === 'string' && typeof (value as ToolDefinition).handler === 'function';
}

/** Every tool declared in a product's tools/ folder, with the file that declares it. */
async function toolFiles(productId: string): Promise<Map<string, string>> {
  const dir = path.join(ROOT, 'mcp/products', productId, 'tools');
  const found = new Map<string, string>();
  if (!fs.existsSync(dir)) return found;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    // The module beside this test's own copy: the .ts source under tsx, the compiled .js in dist/.
    const module = (await import(new URL(`../../mcp/products/${productId}/tools/${file.replace(/\.ts$/, '.js')}`, import.meta.url).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) if (isTool(value)) found.set(value.name, file);
  }
  return found;
}

test('there is at least one live product and ids are unique', (t) => {
  t.true(PRODUCTS.some((p) => p.status === 'live'));
  t.is(new Set(PRODUCTS.map((p) => p.id)).size, PRODUCTS.length);
  for (const product of PRODUCTS) t.regex(product.id, PRODUCT_ID);
});

for (const product of PRODUCTS) {
  test(`${product.id}: every tool is product.verb_noun, declared in tools/<verb_noun>.ts, described, scoped and safe`, async (t) => {
    const files = await toolFiles(product.id);
    t.is(new Set(product.tools.map((tool) => tool.name)).size, product.tools.length, 'tool names are unique');
    if (product.status === 'live') t.true(product.tools.length > 0);
    for (const tool of product.tools) {
      const [, prefix, verbNoun] = TOOL_NAME_FORM.exec(tool.name) ?? [];
      t.is(prefix, product.id, `${tool.name}: name is <product>.<verb_noun>`);
      t.regex(verbNoun ?? '', /^[a-z]+_[a-z0-9_]+$/, `${tool.name}: verb_noun`);
      t.is(files.get(tool.name), `${verbNoun}.ts`, `${tool.name}: declared in mcp/products/${product.id}/tools/${verbNoun}.ts`);
      t.true(tool.title.length >= 3 && tool.title.length <= 60, `${tool.name}: title 3-60 characters`);
      t.true(tool.description.length >= 80 && tool.description.length <= 1200, `${tool.name}: description 80-1200 characters (${tool.description.length})`);
      t.regex(tool.description, /[.!?]$/, `${tool.name}: description ends a sentence`);
      t.regex(tool.scope, SCOPE_FORM, `${tool.name}: scope form`);
      t.true(tool.scope.startsWith(`${product.id}.`), `${tool.name}: scope of its own product`);
      t.truthy(product.scopes[tool.scope], `${tool.name}: scope ${tool.scope} is declared by ${product.id} with a description`);
      t.is(typeof tool.destructive, 'boolean', `${tool.name}: destructive is declared`);
      if (tool.destructive) t.true(tool.scope.endsWith('.write'), `${tool.name}: destructive tools need a write scope`);

      const compiled = compileTool(product, tool);
      const properties = (compiled.inputSchema.properties ?? {}) as Record<string, { type?: string }>;
      t.is(compiled.inputSchema.type, 'object');
      t.false('confirmed' in tool.input, `${tool.name}: products never declare confirmed; the pipeline adds it`);
      if (tool.destructive) {
        t.truthy(tool.confirmation, `${tool.name}: destructive tools say what they destroy`);
        t.regex(tool.confirmation ?? '', /^[A-Z][^.!?]*[^.!?\s][.]$/, `${tool.name}: the confirmation is one sentence`);
        t.is(properties.confirmed?.type, 'boolean', `${tool.name}: accepts confirmed: boolean`);
        t.false((compiled.inputSchema.required as string[] | undefined)?.includes('confirmed') ?? false);
        for (const placeholder of (tool.confirmation ?? '').match(/\{([a-z_]+)\}/g) ?? []) {
          t.truthy(tool.input[placeholder.slice(1, -1)], `${tool.name}: placeholder ${placeholder} is an argument`);
        }
      } else {
        t.false('confirmed' in properties, `${tool.name}: only destructive tools take confirmed`);
      }
      for (const argument of Object.keys(tool.input)) {
        t.regex(argument, /^[a-z][a-z0-9_]*$/, `${tool.name}: argument ${argument} is snake_case`);
        if (argument.endsWith('_id')) t.truthy(product.entities?.[argument.slice(0, -3)], `${tool.name}: ${argument} has an entities entry in ${product.id}`);
      }
      t.not(argument(tool, 'tenant_id'), true, `${tool.name}: the tenant never comes from input`);
      const annotations = annotationsOf(tool);
      t.is(annotations.destructiveHint, tool.destructive);
      t.is(annotations.readOnlyHint, tool.scope.endsWith('.read'));
      if (annotations.readOnlyHint) t.false(tool.destructive);
    }
    t.deepEqual([...files.keys()].filter((name) => !product.tools.some((tool) => tool.name === name)), [], 'every tool file is registered with its product');
  });

  test(`${product.id}: resources, prompts and scopes are well formed`, (t) => {
    for (const [scope, description] of Object.entries(product.scopes)) {
      t.regex(scope, SCOPE_FORM);
      t.true(scope.startsWith(`${product.id}.`));
      t.true(description.length >= 10 && description.length <= 200, `${scope}: plain-words description`);
    }
    for (const resource of product.resources) {
      t.regex(resource.collection, /^[a-z][a-z0-9_]*$/);
      t.truthy(product.scopes[resource.scope], `${resource.collection}: scope declared`);
      t.true(resource.scope.endsWith('.read'), `${resource.collection}: resources are read-only`);
    }
    for (const prompt of product.prompts) {
      t.regex(prompt.name, TOOL_NAME_FORM);
      t.true(prompt.name.startsWith(`${product.id}.`));
      t.truthy(product.scopes[prompt.scope], `${prompt.name}: scope declared`);
      for (const argument of Object.keys(prompt.args)) if (argument.endsWith('_id')) t.truthy(product.entities?.[argument.slice(0, -3)], `${prompt.name}: ${argument}`);
    }
  });

  test(`${product.id}: input schemas as the model sees them`, (t) => {
    for (const tool of product.tools) t.snapshot(compileTool(product, tool).inputSchema, tool.name);
  });
}

function argument(tool: ToolDefinition, name: string): boolean {
  return name in tool.input;
}

testOnEachDatabase('every entity table exists and is tenant-scoped', async (t, { db }) => {
  for (const product of PRODUCTS) {
    for (const [entity, table] of Object.entries(product.entities ?? {})) {
      t.true(await db.schema.hasTable(table), `${product.id}.${entity}: table ${table}`);
      t.true(await db.schema.hasColumn(table, 'tenant_id'), `${table}.tenant_id`);
      t.true(await db.schema.hasColumn(table, 'id'), `${table}.id`);
    }
  }
});

test('the trust pipeline is the only caller of handlers', (t) => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (['node_modules', 'dist', '.git', 'test', 'data'].includes(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && /\.handler\(/.test(fs.readFileSync(full, 'utf8'))) offenders.push(path.relative(ROOT, full));
    }
  };
  walk(ROOT);
  t.deepEqual(offenders, []);
});

test('every object in every published input schema is closed: an unknown field is refused, not dropped, at any depth', (t) => {
  const open: string[] = [];
  const walk = (node: unknown, where: string) => {
    if (!node || typeof node !== 'object') return;
    const schema = node as Record<string, unknown>;
    if (schema.type === 'object' && schema.additionalProperties !== false) open.push(where);
    for (const [key, child] of Object.entries(schema)) {
      if (Array.isArray(child)) child.forEach((item, i) => walk(item, `${where}.${key}[${i}]`));
      else walk(child, `${where}.${key}`);
    }
  };
  let tools = 0;
  for (const product of PRODUCTS) {
    for (const tool of product.tools) {
      walk(compileTool(product, tool).inputSchema, tool.name);
      tools += 1;
    }
  }
  t.true(tools > 50);
  t.deepEqual(open, []);
});
