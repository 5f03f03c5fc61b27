/**
 * The `mcpServers` JSON a client reads to connect to Portico (SPEC.md part 4, "Client registration
 * shape"), built from the catalog alone: `npm run client-config`, `GET {mcp_url}/{product}/client_config`
 * and the console's "Connect a client" page all print what this module returns, so they cannot drift.
 *
 * Scopes are the tightest set per server (SPEC.md 5.3 and 5.8): the union of the chosen tools'
 * required scopes; a product chosen without naming tools gets all of its scopes; read-only asks for
 * read scopes only.
 */
import type { Catalog, ProductDefinition } from './catalog.js';
import { AppError } from './errors.js';

export interface ClientConfigRequest {
  /** Product ids; absent means every product that is live now (or the products of `tools`). Given, it must name one (invalid_request). */
  products?: readonly string[];
  /** Tool names `<product>.<verb_noun>`; a product with tools named gets exactly their scopes. Given, it must name one (invalid_request). */
  tools?: readonly string[];
  /** Only read scopes: every read scope of the product, or the chosen tools' (which must all be read tools). */
  readOnly?: boolean;
  /** Prefix of each server's key in `mcpServers` (default `portico-`). */
  namePrefix?: string;
}

interface McpServerEntry {
  url: string;
  auth: {
    type: 'oauth2_pkce';
    authorize_url: string;
    token_url: string;
    scopes: string[];
  };
}

export interface ClientConfig {
  mcpServers: Record<string, McpServerEntry>;
}

const DEFAULT_NAME_PREFIX = 'portico-';

/**
 * A `read_only` query parameter, as `GET {mcp_url}/{product}/client_config` and the console's
 * Connect page take it: `true` or `1`; `false`, `0` or empty. Anything else is refused, not read
 * as false: that would print write scopes for a configuration asked to be read-only.
 */
export function readOnlyParameter(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new AppError('invalid_request', 'read_only must be true or 1 (read scopes only), or false or 0', { details: { field: 'read_only' } });
}

const NAME_PREFIX_FORM = /^[A-Za-z0-9_.-]{0,40}$/;

/**
 * Throws AppError: `not_found` for an unknown product or one still on the roadmap, `unknown_tool`
 * for a tool no product declares, `invalid_request` for a tool of a product that was not chosen,
 * a write tool with read-only, or a bad name prefix. Each message says what to do instead.
 */
export function buildClientConfig(catalog: Catalog, urls: { authUrl: string; mcpUrl: string }, request: ClientConfigRequest = {}): ClientConfig {
  const namePrefix = request.namePrefix ?? DEFAULT_NAME_PREFIX;
  if (!NAME_PREFIX_FORM.test(namePrefix)) {
    throw new AppError('invalid_request', 'the name prefix may only use letters, digits, "_", "." and "-" (at most 40)', { details: { field: 'name_prefix' } });
  }

  // Given but naming nothing (an empty variable, a stray comma) is a mistake, not "none named":
  // that would answer with every scope or every live product, the widest set, to a request for the tightest one.
  if (request.products && !request.products.length) {
    throw new AppError('invalid_request', 'products names no product: give product ids separated by commas (e.g. forge,aegis), or leave it out for every live product', {
      details: { field: 'products' },
    });
  }
  if (request.tools && !request.tools.length) {
    throw new AppError('invalid_request', 'tools names no tool: give tool names separated by commas (e.g. aegis.list_findings), or leave it out for every scope of the product', {
      details: { field: 'tools' },
    });
  }
  const toolsByProduct = new Map<string, string[]>();
  for (const name of unique(request.tools ?? [])) {
    const product = catalog.products.find((p) => p.tools.some((tool) => tool.name === name));
    if (!product) throw new AppError('unknown_tool', `no product has a tool named ${name} (see GET {mcp_url}/{product}/list_tools)`, { details: { field: 'tools', tool: name } });
    toolsByProduct.set(product.id, [...(toolsByProduct.get(product.id) ?? []), name]);
  }

  const named = unique(request.products ?? []);
  for (const id of named) requireLive(catalog, id);
  for (const [productId, names] of toolsByProduct) {
    if (named.length && !named.includes(productId)) {
      throw new AppError('invalid_request', `${names[0]} belongs to ${productId}, which is not among the chosen products (${named.join(', ')}); add it or drop the tool`, {
        details: { field: 'tools', tool: names[0] },
      });
    }
    requireLive(catalog, productId);
  }

  const chosen = named.length ? named : toolsByProduct.size ? [...toolsByProduct.keys()] : catalog.products.filter((p) => catalog.isLive(p.id)).map((p) => p.id);
  const mcpServers: Record<string, McpServerEntry> = {};
  // Catalog order (SPEC.md part 1.5), whatever order the products were named in.
  for (const product of catalog.products.filter((p) => chosen.includes(p.id))) {
    mcpServers[`${namePrefix}${product.id}`] = {
      url: `${urls.mcpUrl}/${product.id}`,
      auth: {
        type: 'oauth2_pkce',
        authorize_url: `${urls.authUrl}/oauth/authorize`,
        token_url: `${urls.authUrl}/oauth/token`,
        scopes: scopesFor(product, toolsByProduct.get(product.id), request.readOnly === true),
      },
    };
  }
  return { mcpServers };
}

function scopesFor(product: ProductDefinition<any>, toolNames: string[] | undefined, readOnly: boolean): string[] {
  const declared = Object.keys(product.scopes);
  if (!toolNames) return readOnly ? declared.filter((scope) => scope.endsWith('.read')) : declared;
  const needed = new Set<string>();
  for (const name of toolNames) {
    const tool = product.tools.find((t) => t.name === name)!;
    if (readOnly && !tool.scope.endsWith('.read')) {
      throw new AppError('invalid_request', `${name} needs ${tool.scope}, a write scope, so it cannot be part of a read-only configuration`, {
        details: { field: 'tools', tool: name },
      });
    }
    needed.add(tool.scope);
  }
  return declared.filter((scope) => needed.has(scope));
}

function requireLive(catalog: Catalog, id: string): void {
  if (!catalog.product(id)) {
    throw new AppError('not_found', `no product named ${id}; products: ${catalog.products.map((p) => p.id).join(', ')}`, { details: { field: 'products', product: id } });
  }
  if (!catalog.isLive(id)) {
    throw new AppError('not_found', `${id} is on the roadmap and not served yet; it can be configured once it ships`, { details: { field: 'products', product: id } });
  }
}

/**
 * A comma-separated list as a CLI flag or query parameter gives it: trimmed, no empties, no
 * duplicates; undefined when it was not given (an empty list is one given that names nothing).
 */
export function parseList(value: string | readonly string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const parts = (typeof value === 'string' ? [value] : value).flatMap((v) => v.split(','));
  return unique(parts.map((p) => p.trim()).filter(Boolean));
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
