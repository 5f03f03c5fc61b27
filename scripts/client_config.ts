/**
 * `npm run client-config -- [--products forge,aegis] [--tools aegis.list_findings,…] [--read-only] [--name-prefix p-]`
 * prints the `mcpServers` JSON of SPEC.md part 4 for the chosen servers (DESIGN.md §2). The base
 * URLs come from the same configuration the server reads (PUBLIC_AUTH_URL, PUBLIC_MCP_URL …).
 *
 * Which products are live is read from the database when it exists (an operator may have shipped
 * midas); the command never creates, migrates or writes a database. Exit codes (docs/clients.md):
 * 0 printed (or --help), 2 usage, configuration (as the server and the admin CLI), or a refused
 * request (unknown or roadmap product, unknown tool …), 1 anything unexpected.
 */
import { buildCatalog, type Catalog } from '../shared/catalog.js';
import { parseArgs } from '../shared/cli_args.js';
import { buildClientConfig, parseList } from '../shared/client_config.js';
import { ConfigError, loadConfig, type Config } from '../shared/config.js';
import { isAppError } from '../shared/errors.js';
import { connectDatabase, isMissingSqlite } from '../db/connect.js';
import { describeDatabaseFailure } from '../db/errors.js';
import { surfaceOverrides } from '../db/surfaces.js';
import { PRODUCTS } from '../mcp/products/index.js';
import { isEntryPoint } from './entry_point.js';

const USAGE = `usage: npm run client-config -- [--products forge,aegis] [--tools aegis.list_findings,...] [--read-only] [--name-prefix portico-]

Prints the mcpServers JSON an MCP client needs for the chosen Portico servers.
  --products     comma-separated product ids (default: every live product, or the products of --tools)
  --tools        comma-separated tool names; each server asks only for the scopes its chosen tools need
  --read-only    read scopes only (for review sessions)
  --name-prefix  prefix of each server's name in mcpServers (default "portico-")`;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export async function runClientConfig(args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  let values: { products?: string[]; tools?: string[]; 'read-only'?: boolean; 'name-prefix'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        products: { type: 'string', multiple: true },
        tools: { type: 'string', multiple: true },
        'read-only': { type: 'boolean' },
        'name-prefix': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    }));
  } catch (error) {
    io.err(`error: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }

  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(`error: invalid configuration: ${error.message}`);
      return 2;
    }
    throw error;
  }

  const catalog = await catalogWithSurfaces(config, io);
  try {
    const json = buildClientConfig(catalog, config, {
      products: parseList(values.products),
      tools: parseList(values.tools),
      readOnly: values['read-only'] === true,
      namePrefix: values['name-prefix'],
    });
    io.out(JSON.stringify(json, null, 2));
    return 0;
  } catch (error) {
    if (isAppError(error)) {
      io.err(`error: ${error.message}`);
      return 2;
    }
    throw error;
  }
}

/** The catalog with the liveness the running service would use (surface overrides in the database). */
async function catalogWithSurfaces(config: Config, io: CliIo): Promise<Catalog> {
  const declared = (id: string) => PRODUCTS.find((p) => p.id === id)?.status === 'live';
  // A fresh install has no database file yet: nothing has shipped, and opening it would create it.
  if (isMissingSqlite(config.database)) {
    return buildCatalog(PRODUCTS, declared);
  }
  const db = connectDatabase(config.database);
  try {
    const overrides = (await db.schema.hasTable('surfaces')) ? await surfaceOverrides(db) : new Map();
    return buildCatalog(PRODUCTS, (id) => (overrides.get(id) ?? PRODUCTS.find((p) => p.id === id)?.status) === 'live');
  } catch (error) {
    io.err(`warning: could not read which products are live from the database (${describeDatabaseFailure(error) ?? (error as Error).message}); using the declared statuses`);
    return buildCatalog(PRODUCTS, declared);
  } finally {
    await db.destroy();
  }
}

if (isEntryPoint(import.meta.url)) {
  const code = await runClientConfig(process.argv.slice(2), process.env, {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  });
  process.exitCode = code;
}
