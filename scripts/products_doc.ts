/**
 * `npm run docs:products` writes docs/products.md from the catalog: every server, its scopes,
 * tools (scope, destructive flag), resources and prompts. A test fails when the file is stale,
 * so the document can never drift from what the servers actually offer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PRODUCTS } from '../mcp/products/index.js';
import { annotationsOf, type ProductDefinition } from '../shared/catalog.js';
import { isEntryPoint } from './entry_point.js';
import { PROJECT_ROOT } from './project_root.js';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const firstSentence = (text: string) => {
  // A sentence ends at . ! or ? followed by a space, but not at the abbreviations e.g. and i.e.
  const match = /^(.+?(?<!\b(?:e\.g|i\.e))[.!?])(\s|$)/s.exec(text.trim());
  return cell(match ? match[1] : text.trim());
};

function productSection(p: ProductDefinition<any>): string {
  const lines = [
    `## ${p.title} — \`/mcp/${p.id}\``,
    '',
    `${p.kind}. Status: **${p.status}**${p.status === 'roadmap' ? ' (its tools are served once an operator runs `npm run admin -- surface ship ' + p.id + '`)' : ''}.` +
      (p.connectableBy === 'admins' ? ' Connected by an organization\'s **administrators only**: it reads the whole organization\'s set-up, which the console shows administrators only.' : ''),
    '',
    '| scope | allows |',
    '|---|---|',
    ...Object.entries(p.scopes).map(([scope, text]) => `| \`${scope}\` | ${cell(text)} |`),
    '',
    '| tool | scope | destructive | what it does |',
    '|---|---|---|---|',
    ...p.tools.map((tool) => {
      const args = Object.keys((z.toJSONSchema(z.object(tool.input)) as { properties?: object }).properties ?? {});
      const hints = annotationsOf(tool);
      return `| \`${tool.name}\`(${args.join(', ')}) | \`${tool.scope}\` | ${tool.destructive ? '**yes**' : hints.readOnlyHint ? 'no (read-only)' : 'no'} | ${firstSentence(tool.description)} |`;
    }),
  ];
  if (p.resources.length) {
    lines.push('', '| resource | scope | what it is |', '|---|---|---|');
    for (const r of p.resources) lines.push(`| \`portico://${p.id}/${r.collection}/{id}\` | \`${r.scope}\` | ${firstSentence(r.description)} |`);
  }
  if (p.prompts.length) {
    lines.push('', '| prompt | scope | what it does |', '|---|---|---|');
    for (const prompt of p.prompts) lines.push(`| \`${prompt.name}\` | \`${prompt.scope}\` | ${firstSentence(prompt.description)} |`);
  }
  return lines.join('\n');
}

export function renderProductsDoc(): string {
  const tools = PRODUCTS.reduce((n, p) => n + p.tools.length, 0);
  const destructive = PRODUCTS.reduce((n, p) => n + p.tools.filter((t) => t.destructive).length, 0);
  return [
    '# Product servers',
    '',
    '<!-- Generated from the catalog by `npm run docs:products`; do not edit by hand. -->',
    '',
    `${PRODUCTS.length} servers, ${tools} tools (${destructive} destructive: they answer \`confirmation_required\` until re-invoked with \`confirmed: true\`).`,
    'Every call is checked against the grant\'s scopes and tenant and recorded in the audit log. The',
    'live catalog is also served at `GET {mcp_url}/` and `GET {mcp_url}/{product}/list_tools`.',
    '',
    '| server | kind | status | tools | scopes |',
    '|---|---|---|---|---|',
    ...PRODUCTS.map((p) => `| [\`/mcp/${p.id}\`](#${p.title.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')}--mcp${p.id}) | ${cell(p.kind)} | ${p.status} | ${p.tools.length} | ${Object.keys(p.scopes).length} |`),
    '',
    ...PRODUCTS.map(productSection).flatMap((s) => [s, '']),
  ].join('\n');
}

export const PRODUCTS_DOC = path.join(PROJECT_ROOT, 'docs', 'products.md');

if (isEntryPoint(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.length) {
    // --help (or any argument: the script takes none) explains instead of writing the file.
    const asked = args.length === 1 && ['--help', '-h'].includes(args[0]);
    (asked ? console.log : console.error)('usage: npm run docs:products   (writes docs/products.md from the tool catalog; takes no arguments)');
    process.exitCode = asked ? 0 : 2;
  } else {
    fs.writeFileSync(PRODUCTS_DOC, renderProductsDoc());
    console.log(`wrote ${path.relative(process.cwd(), PRODUCTS_DOC)}`);
  }
}
