import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { PRODUCTS_DOC, renderProductsDoc } from '../../scripts/products_doc.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { MAX_LISTED } from '../../mcp/products/forge/analysis.js';

test('docs/products.md is generated from the current catalog (run npm run docs:products)', (t) => {
  t.is(fs.readFileSync(PRODUCTS_DOC, 'utf8'), renderProductsDoc());
});

test('npm run docs:products -- --help explains and writes nothing; an argument it does not take is a usage error', async (t) => {
  const run = (...args: string[]) => promisify(execFile)(process.execPath, ['--import=tsx', 'scripts/products_doc.ts', ...args], { encoding: 'utf8' })
    .then(({ stdout }) => ({ code: 0, stdout, stderr: '' }), (err: { code: number; stdout: string; stderr: string }) => err);
  const before = fs.statSync(PRODUCTS_DOC).mtimeMs;
  const help = await run('--help');
  t.is(help.code, 0);
  t.regex(help.stdout, /^usage: npm run docs:products/);
  const wrong = await run('--out', 'x.md');
  t.is(wrong.code, 2);
  t.regex(wrong.stderr, /^usage: npm run docs:products/);
  t.is(fs.statSync(PRODUCTS_DOC).mtimeMs, before, 'docs/products.md was written');
});

test('the products document names every server, tool and scope, and marks destructive tools', (t) => {
  const doc = renderProductsDoc();
  t.is(PRODUCTS.length, 10);
  for (const product of PRODUCTS) {
    t.true(doc.includes(`\`/mcp/${product.id}\``), product.id);
    for (const scope of Object.keys(product.scopes)) t.true(doc.includes(`| \`${scope}\` |`), scope);
    for (const tool of product.tools) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${tool.name}\`(`));
      t.truthy(row, tool.name);
      t.is(row!.includes('| **yes** |'), tool.destructive, `${tool.name} destructive flag`);
    }
  }
});

test('descriptions say where what they return stops, and how the caller learns that more was left out', (t) => {
  const described = new Map(PRODUCTS.flatMap((product) => [...product.tools, ...product.prompts].map((entry) => [entry.name, entry.description] as const)));
  const says = (name: string, ...parts: RegExp[]) => {
    for (const part of parts) t.regex(described.get(name) ?? '', part, name);
  };
  says('forge.analyze_document', new RegExp(`first ${MAX_LISTED} found`), /<list>_total/, /<list>_truncated/);
  says('aegis.triage_findings', /at most 200/, /findings_truncated/);
  says('pawvault.list_health_records', /<kind>_total/, /<kind>_truncated/, /next_cursor/);
});
