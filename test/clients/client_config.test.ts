/**
 * The client configuration (SPEC.md part 4, 5.8): the pure builder, `npm run client-config` (as a
 * real child process, and its `runClientConfig` in this process), and
 * `GET {mcp_url}/{product}/client_config` on a real server, which must all print the same JSON.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { PRODUCTS } from '../../mcp/products/index.js';
import { buildCatalog } from '../../shared/catalog.js';
import { buildClientConfig, type ClientConfigRequest } from '../../shared/client_config.js';
import { isAppError } from '../../shared/errors.js';
import { setSurfaceStatus } from '../../db/surfaces.js';
import { runClientConfig } from '../../scripts/client_config.js';
import { testOnEachDatabase } from '../helpers/db.js';
import { mcpTest } from '../helpers/mcp.js';

const run = promisify(execFile);
const URLS = { authUrl: 'https://auth.example.com', mcpUrl: 'https://mcp.example.com/mcp' };
const catalog = buildCatalog(PRODUCTS);
const LIVE = ['forge', 'cavalier', 'aegis', 'harvest', 'reclaim', 'herald', 'terrain', 'people', 'pawvault'];

function build(request: ClientConfigRequest) {
  return buildClientConfig(catalog, URLS, request);
}

function refusal(request: ClientConfigRequest): { code: string; message: string } {
  try {
    build(request);
  } catch (error) {
    if (isAppError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(request)} to be refused`);
}

test('one tool: the SPEC part 4 entry with exactly that tool’s scope', (t) => {
  t.deepEqual(build({ products: ['aegis'], tools: ['aegis.list_findings'] }), {
    mcpServers: {
      'portico-aegis': {
        url: 'https://mcp.example.com/mcp/aegis',
        auth: {
          type: 'oauth2_pkce',
          authorize_url: 'https://auth.example.com/oauth/authorize',
          token_url: 'https://auth.example.com/oauth/token',
          scopes: ['aegis.findings.read'],
        },
      },
    },
  });
});

test('scopes are the union of the chosen tools’ scopes, per server, without duplicates', (t) => {
  const json = build({ tools: ['aegis.list_findings', 'aegis.list_scans', 'aegis.get_scan', 'forge.create_conversation', 'forge.add_message'] });
  t.deepEqual(Object.keys(json.mcpServers), ['portico-forge', 'portico-aegis'], 'the products of the tools, in catalog order');
  t.deepEqual(json.mcpServers['portico-aegis'].auth.scopes, ['aegis.scans.read', 'aegis.findings.read']);
  t.deepEqual(json.mcpServers['portico-forge'].auth.scopes, ['forge.chat.write']);
});

test('a product chosen without tools gets all its scopes; beside one with tools, each keeps its own set', (t) => {
  const json = build({ products: ['forge', 'aegis'], tools: ['aegis.resolve_finding'] });
  t.deepEqual(json.mcpServers['portico-forge'].auth.scopes, ['forge.chat.read', 'forge.chat.write', 'forge.content.read', 'forge.content.write', 'forge.documents.read', 'forge.documents.write']);
  t.deepEqual(json.mcpServers['portico-aegis'].auth.scopes, ['aegis.findings.write']);
});

test('--read-only: every read scope of the product and no write scope', (t) => {
  const json = build({ products: ['aegis', 'forge'], readOnly: true });
  t.deepEqual(json.mcpServers['portico-aegis'].auth.scopes, ['aegis.scans.read', 'aegis.findings.read']);
  t.deepEqual(json.mcpServers['portico-forge'].auth.scopes, ['forge.chat.read', 'forge.content.read', 'forge.documents.read']);
  const all = build({ readOnly: true });
  t.deepEqual(Object.keys(all.mcpServers), LIVE.map((id) => `portico-${id}`));
  for (const entry of Object.values(all.mcpServers)) {
    t.true(entry.auth.scopes.length > 0);
    t.true(entry.auth.scopes.every((scope) => scope.endsWith('.read')), JSON.stringify(entry.auth.scopes));
  }
});

test('read-only with read tools keeps the tightest set; a write tool is refused', (t) => {
  t.deepEqual(build({ tools: ['aegis.list_findings'], readOnly: true }).mcpServers['portico-aegis'].auth.scopes, ['aegis.findings.read']);
  const refused = refusal({ tools: ['aegis.list_findings', 'aegis.delete_scan'], readOnly: true });
  t.is(refused.code, 'invalid_request');
  t.regex(refused.message, /aegis\.delete_scan needs aegis\.scans\.write, a write scope/);
});

test('no options: every live product with all of its scopes; midas (roadmap) is not offered', (t) => {
  const json = build({});
  t.deepEqual(Object.keys(json.mcpServers), LIVE.map((id) => `portico-${id}`));
  t.deepEqual(json.mcpServers['portico-aegis'].auth.scopes, ['aegis.scans.read', 'aegis.scans.write', 'aegis.findings.read', 'aegis.findings.write']);
});

test('unknown products and tools, a tool of an unchosen product and roadmap products are clear errors', (t) => {
  t.like(refusal({ products: ['nosuch'] }), { code: 'not_found' });
  t.regex(refusal({ products: ['nosuch'] }).message, /no product named nosuch; products: forge, cavalier/);
  t.like(refusal({ tools: ['aegis.no_such_tool'] }), { code: 'unknown_tool', message: 'no product has a tool named aegis.no_such_tool (see GET {mcp_url}/{product}/list_tools)' });
  t.like(refusal({ tools: ['list_findings'] }), { code: 'unknown_tool' });
  t.like(refusal({ products: ['forge'], tools: ['aegis.list_findings'] }), {
    code: 'invalid_request', message: 'aegis.list_findings belongs to aegis, which is not among the chosen products (forge); add it or drop the tool',
  });
  t.like(refusal({ products: ['midas'] }), { code: 'not_found', message: 'midas is on the roadmap and not served yet; it can be configured once it ships' });
  t.like(refusal({ tools: ['midas.list_endpoints'] }), { code: 'not_found' });
  t.like(refusal({ namePrefix: 'bad prefix' }), { code: 'invalid_request' });
  t.like(refusal({ namePrefix: 'x'.repeat(41) }), { code: 'invalid_request' });
});

test('once midas ships it is configured like any other product', (t) => {
  const shipped = buildCatalog(PRODUCTS, () => true);
  const json = buildClientConfig(shipped, URLS, { tools: ['midas.list_endpoints', 'midas.update_endpoint'] });
  t.deepEqual(json.mcpServers['portico-midas'].auth.scopes, ['midas.api.read', 'midas.api.write']);
  t.is(json.mcpServers['portico-midas'].url, 'https://mcp.example.com/mcp/midas');
});

test('the name prefix names each server; an empty prefix leaves the product id', (t) => {
  t.deepEqual(Object.keys(build({ products: ['forge'], namePrefix: 'acme-' }).mcpServers), ['acme-forge']);
  t.deepEqual(Object.keys(build({ products: ['forge'], namePrefix: '' }).mcpServers), ['forge']);
});

// ---- the CLI, as a person runs it ----------------------------------------------------------

const SCRIPT = path.resolve('scripts/client_config.ts');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI with only the environment given (and PATH, and a fresh DATA_DIR it must not write
 * into). `spawned` runs it as a real child process, as `npm run client-config` does; otherwise its
 * `runClientConfig` runs in this process, which is what the child runs (it only writes the two
 * streams and sets the exit code), without compiling the imports through tsx again (seconds a call).
 */
async function cli(args: string[], env: Record<string, string> = {}, { spawned = false } = {}): Promise<CliResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-cc-'));
  const fullEnv = { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PUBLIC_AUTH_URL: 'https://auth.example.com', PUBLIC_MCP_URL: 'https://mcp.example.com/mcp', ...env };
  try {
    return spawned ? await inChild(args, fullEnv) : await inProcess(args, fullEnv);
  } finally {
    const created = fs.readdirSync(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (created.length) throw new Error(`the CLI wrote ${created.join(', ')} into DATA_DIR`);
  }
}

async function inChild(args: string[], env: Record<string, string>): Promise<CliResult> {
  try {
    const result = await run(process.execPath, ['--import', 'tsx', SCRIPT, ...args], { env });
    return { code: 0, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function inProcess(args: string[], env: Record<string, string>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runClientConfig(args, env, { out: (text) => (stdout += `${text}\n`), err: (text) => (stderr += `${text}\n`) });
  return { code, stdout, stderr };
}

test('npm run client-config prints the builder’s JSON with the configured base URLs', async (t) => {
  const result = await cli(['--products', 'forge,aegis', '--tools', 'aegis.list_findings', '--name-prefix', 'acme-'], {}, { spawned: true });
  t.is(result.code, 0, result.stderr);
  t.deepEqual(JSON.parse(result.stdout), build({ products: ['forge', 'aegis'], tools: ['aegis.list_findings'], namePrefix: 'acme-' }));
  t.is(JSON.parse(result.stdout).mcpServers['acme-aegis'].auth.token_url, 'https://auth.example.com/oauth/token');

  const readOnly = await cli(['--products', 'aegis', '--read-only']);
  t.deepEqual(JSON.parse(readOnly.stdout).mcpServers['portico-aegis'].auth.scopes, ['aegis.scans.read', 'aegis.findings.read']);

  const defaults = await cli([], { PUBLIC_AUTH_URL: '', PUBLIC_MCP_URL: '', PORT: '9090' });
  const forge = JSON.parse(defaults.stdout).mcpServers['portico-forge'];
  t.is(forge.url, 'http://localhost:9090/mcp/forge');
  t.is(forge.auth.authorize_url, 'http://localhost:9090/oauth/authorize');
});

test('the CLI refuses unknown products and tools, roadmap products and bad flags with a message and exit 2', async (t) => {
  const unknownTool = await cli(['--tools', 'aegis.list_everything']);
  t.is(unknownTool.code, 2);
  t.is(unknownTool.stdout, '');
  t.regex(unknownTool.stderr, /^error: no product has a tool named aegis\.list_everything/);

  const foreign = await cli(['--products', 'forge', '--tools', 'aegis.list_findings']);
  t.is(foreign.code, 2);
  t.regex(foreign.stderr, /aegis\.list_findings belongs to aegis, which is not among the chosen products/);

  const roadmap = await cli(['--products', 'midas']);
  t.is(roadmap.code, 2);
  t.regex(roadmap.stderr, /midas is on the roadmap/);

  const flag = await cli(['--product', 'forge'], {}, { spawned: true });
  t.is(flag.code, 2);
  t.regex(flag.stderr, /^error: Unknown option '--product'\n\nusage: npm run client-config/);

  const positional = await cli(['forge']);
  t.is(positional.code, 2);
  t.regex(positional.stderr, /^error: Unexpected argument 'forge'/);

  const prefix = await cli(['--products', 'forge', '--name-prefix', 'bad prefix']);
  t.is(prefix.code, 2);
  t.regex(prefix.stderr, /^error: the name prefix may only use/);

  const help = await cli(['--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /^usage: npm run client-config/);
});

test('the CLI exits 2 on a configuration error, like the server and the admin CLI, and names the variable', async (t) => {
  for (const [variable, value] of [['PUBLIC_MCP_URL', 'ftp://x'], ['PORT', 'x'], ['DATABASE_URL', 'mysql://nope']]) {
    const config = await cli([], { [variable]: value });
    t.is(config.code, 2, variable);
    t.is(config.stdout, '', variable);
    t.regex(config.stderr, new RegExp(`^error: invalid configuration: ${variable}: `), variable);
  }
});

test('a --tools that names no tool is refused with exit 2, not widened to every scope of every product', async (t) => {
  // An empty list (an unset shell variable, a stray comma) asked for the tightest scopes and got
  // every write scope of every live product.
  for (const tools of ['', ',', ' , ']) {
    const result = await cli(['--tools', tools]);
    t.is(result.code, 2, `--tools '${tools}': ${result.stdout.slice(0, 200)}`);
    t.is(result.stdout, '');
    t.regex(result.stderr, /^error: tools names no tool: give tool names separated by commas/, `--tools '${tools}'`);
  }
  const withProduct = await cli(['--products', 'aegis', '--tools', ',']);
  t.is(withProduct.code, 2, withProduct.stdout.slice(0, 200));
});

test('a --products that names no product is refused with exit 2, not widened to every live product', async (t) => {
  for (const products of ['', ',', ' , ']) {
    const result = await cli(['--products', products]);
    t.is(result.code, 2, `--products '${products}': ${result.stdout.slice(0, 200)}`);
    t.is(result.stdout, '');
    t.regex(result.stderr, /^error: products names no product: give product ids separated by commas/, `--products '${products}'`);
  }
  t.is((await cli(['--products', 'aegis,'])).code, 0, 'a stray comma beside a product is harmless');
});

test('a --name-prefix given twice is refused with exit 2, not the last one taken', async (t) => {
  const result = await cli(['--products', 'aegis', '--name-prefix', 'acme-', '--name-prefix', 'globex-']);
  t.is(result.code, 2, result.stdout.slice(0, 200));
  t.is(result.stdout, '');
  t.regex(result.stderr, /^error: --name-prefix may be given once\n\nusage: npm run client-config/);
  t.is((await cli(['--products', 'aegis', '--products', 'forge'])).code, 0, '--products and --tools may be repeated, their lists joined');
});

testOnEachDatabase('the CLI reads which products are live from the database: midas once shipped', async (t, { db, url }) => {
  const before = await cli(['--products', 'midas'], { DATABASE_URL: url });
  t.is(before.code, 2);
  await setSurfaceStatus(db, 'midas', 'live');
  const after = await cli(['--products', 'midas', '--read-only'], { DATABASE_URL: url });
  t.is(after.code, 0, after.stderr);
  t.deepEqual(JSON.parse(after.stdout).mcpServers['portico-midas'].auth.scopes, ['midas.api.read']);
});

// ---- GET {mcp_url}/{product}/client_config --------------------------------------------------

mcpTest('GET {mcp_url}/{product}/client_config serves the same JSON as the CLI, for the server’s own URLs', async (t, server) => {
  const response = await fetch(`${server.mcpUrl}/aegis/client_config?tools=aegis.list_findings,aegis.list_scans&name_prefix=acme-`);
  t.is(response.status, 200);
  t.is(response.headers.get('access-control-allow-origin'), '*');
  const body = (await response.json()) as any;
  t.deepEqual(body, {
    mcpServers: {
      'acme-aegis': {
        url: `${server.url}/mcp/aegis`,
        auth: { type: 'oauth2_pkce', authorize_url: `${server.url}/oauth/authorize`, token_url: `${server.url}/oauth/token`, scopes: ['aegis.scans.read', 'aegis.findings.read'] },
      },
    },
  });
  const viaCli = await cli(['--products', 'aegis', '--tools', 'aegis.list_findings,aegis.list_scans', '--name-prefix', 'acme-'], {
    PUBLIC_AUTH_URL: server.config.authUrl, PUBLIC_MCP_URL: server.config.mcpUrl,
  });
  t.deepEqual(JSON.parse(viaCli.stdout), body);

  const all = (await (await fetch(`${server.mcpUrl}/forge/client_config`)).json()) as any;
  t.is(all.mcpServers['portico-forge'].auth.scopes.length, 6);
  const readOnly = (await (await fetch(`${server.mcpUrl}/forge/client_config?read_only=true`)).json()) as any;
  t.deepEqual(readOnly.mcpServers['portico-forge'].auth.scopes, ['forge.chat.read', 'forge.content.read', 'forge.documents.read']);
});

mcpTest('client_config refuses bad input with a stable code, and the server keeps serving', async (t, server) => {
  const cases: Array<[string, number, string]> = [
    ['/aegis/client_config?tools=aegis.nope', 400, 'unknown_tool'],
    ['/aegis/client_config?tools=forge.create_conversation', 400, 'invalid_request'],
    ['/aegis/client_config?read_only=maybe', 400, 'invalid_request'],
    ['/aegis/client_config?read_only=true&read_only=false', 400, 'invalid_request'],
    ['/aegis/client_config?read_only=true&tools=aegis.delete_scan', 400, 'invalid_request'],
    ['/aegis/client_config?scopes=all', 400, 'invalid_request'],
    ['/aegis/client_config?name_prefix=%3Cscript%3E', 400, 'invalid_request'],
    ['/midas/client_config', 404, 'not_found'],
    ['/nosuch/client_config', 404, 'not_found'],
  ];
  for (const [pathAndQuery, status, code] of cases) {
    const response = await fetch(`${server.mcpUrl}${pathAndQuery}`);
    t.is(response.status, status, pathAndQuery);
    const body = (await response.json()) as any;
    t.is(body.error.code, code, pathAndQuery);
    t.is(typeof body.error.message, 'string');
    t.truthy(body.error.request_id);
  }
  const post = await fetch(`${server.mcpUrl}/aegis/client_config`, { method: 'POST', body: '{}' });
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
  t.is((await fetch(`${server.mcpUrl}/aegis/client_config`)).status, 200);
});

mcpTest('client_config refuses a tools parameter that names no tool, rather than answer with every scope', async (t, server) => {
  for (const query of ['tools=', 'tools=,', 'tools=%20', 'tools=&tools=']) {
    const response = await fetch(`${server.mcpUrl}/aegis/client_config?${query}`);
    const body = (await response.json()) as any;
    t.is(response.status, 400, `${query}: ${JSON.stringify(body).slice(0, 200)}`);
    t.is(body.error?.code, 'invalid_request', query);
    t.regex(body.error?.message ?? '', /^tools names no tool/, query);
  }
  t.is((await fetch(`${server.mcpUrl}/aegis/client_config`)).status, 200, 'no tools parameter: every scope of the product, as documented');
});

mcpTest('client_config follows the surface: midas is offered once it ships', async (t, server) => {
  t.is((await fetch(`${server.mcpUrl}/midas/client_config`)).status, 404);
  await setSurfaceStatus(server.db, 'midas', 'live');
  await server.events.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
  const body = (await (await fetch(`${server.mcpUrl}/midas/client_config?read_only=1`)).json()) as any;
  t.deepEqual(body.mcpServers['portico-midas'].auth.scopes, ['midas.api.read']);
});
