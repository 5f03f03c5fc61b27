/**
 * The protected resources (RFC 8707): one per product server, `{mcp_url}/{product}`, plus the
 * console API `{api_url}/mcp` (named by any of its URLs, `{api_url}/mcp/v1/…`, too). Liveness can
 * change while the process runs (a product ships), so every question goes to the catalog; nothing
 * here is computed once at start.
 */
import type { Catalog } from '../shared/catalog.js';
import type { Config } from '../shared/config.js';
import { CONSOLE_PRODUCT, CONSOLE_SCOPES, consoleResource } from '../shared/console_scopes.js';

export interface ProtectedResource {
  /** Canonical resource indicator; also the access token's only audience. */
  uri: string;
  /** The product id, or 'console' for the console API. */
  product: string;
  scopes: string[];
  /** Only an organization's administrators may connect it (ProductDefinition.connectableBy). */
  adminsOnly: boolean;
}

/** OIDC scopes the server also knows; they never name a resource. */
export const OIDC_SCOPES = ['openid', 'offline_access'];

/**
 * The scopes of the claims auth/provider.ts releases besides `sub` (its CLAIMS): registration
 * accepts them (test/auth/registration_edges/registration_claim_scope.ts), and they name no resource either.
 * Asked with `openid`, the consent page offers them beside the resource's scopes; granted, their
 * claim is in the ID token (auth/interactions.ts).
 */
export const CLAIM_SCOPES = ['email'];

export class ResourceRegistry {
  constructor(private readonly catalog: Catalog, private readonly config: Pick<Config, 'mcpUrl' | 'apiUrl'>) {}

  /**
   * The resource an indicator names, or undefined. The indicator is canonicalised first (RFC 8707 §2:
   * absolute URI, no fragment; we also drop a trailing slash and compare scheme and host
   * case-insensitively) so the audience is always exactly one string.
   */
  resolve(indicator: string): ProtectedResource | undefined {
    const canonical = canonicalResource(indicator);
    if (!canonical) return undefined;
    // The console API is one resource with many URLs: a client asks for the URL whose 401 named its
    // metadata (RFC 9728 §3.3), and the audience is the API as a whole (RFC 8707 §2 lets the
    // server map a resource URI to a more general one).
    const console = consoleResource(this.config.apiUrl);
    if (canonical === console || canonical.startsWith(`${console}/v1/`)) {
      return { uri: console, product: CONSOLE_PRODUCT, scopes: Object.keys(CONSOLE_SCOPES), adminsOnly: false };
    }
    const base = canonicalResource(this.config.mcpUrl);
    if (!base || !canonical.startsWith(`${base}/`)) return undefined;
    const product = canonical.slice(base.length + 1);
    if (!/^[a-z][a-z0-9]*$/.test(product)) return undefined;
    // A roadmap product is a resource too: a client may connect before it ships, sees no tools,
    // and is told (tools/list_changed) when they appear. Its tools refuse calls until then.
    const definition = this.catalog.product(product);
    const scopes = Object.keys(definition?.scopes ?? {});
    if (!scopes.length) return undefined; // no such product
    return { uri: `${base}/${product}`, product, scopes, adminsOnly: definition?.connectableBy === 'admins' };
  }

  /** The resource implied by a scope list: all product scopes of one product, or undefined. */
  impliedBy(scopes: Iterable<string>): { resource?: ProtectedResource; products: string[] } {
    const products = new Set<string>();
    for (const scope of scopes) {
      if (!scope || OIDC_SCOPES.includes(scope) || CLAIM_SCOPES.includes(scope)) continue;
      products.add(this.productOfScope(scope) ?? `unknown:${scope}`);
    }
    const list = [...products];
    if (list.length !== 1 || list[0].startsWith('unknown:')) return { products: list };
    return { resource: this.resolve(this.uriOf(list[0])), products: list };
  }

  uriOf(product: string): string {
    return product === CONSOLE_PRODUCT ? consoleResource(this.config.apiUrl) : `${canonicalResource(this.config.mcpUrl)}/${product}`;
  }

  productOfScope(scope: string): string | undefined {
    if (scope in CONSOLE_SCOPES) return CONSOLE_PRODUCT;
    return this.catalog.productOfScope(scope);
  }

  describeScope(scope: string): string | undefined {
    return CONSOLE_SCOPES[scope] ?? this.catalog.describeScope(scope);
  }

  /** Every scope a client may ever name (registration validates against it): all products, live or not. */
  allScopes(): string[] {
    const product = this.catalog.products.flatMap((p) => Object.keys(p.scopes));
    return [...new Set([...OIDC_SCOPES, ...product, ...Object.keys(CONSOLE_SCOPES)])];
  }

  /** What discovery advertises right now: live products only. */
  liveScopes(): string[] {
    return [...OIDC_SCOPES, ...CLAIM_SCOPES, ...this.catalog.scopes.map((s) => s.scope), ...Object.keys(CONSOLE_SCOPES)];
  }

  /** Human title of a resource for the consent page. */
  titleOf(resource: ProtectedResource): string {
    if (resource.product === CONSOLE_PRODUCT) return 'Portico console';
    const product = this.catalog.product(resource.product);
    if (!product) return resource.product;
    return this.catalog.isLive(product.id) ? product.title : `${product.title} (on the roadmap: its tools appear when it ships)`;
  }
}

/** Canonical form of a resource URI, or undefined when it is not an absolute http(s) URI without query or fragment. */
function canonicalResource(value: string): string | undefined {
  if (typeof value !== 'string' || value.length > 2048 || /[\s\\]/.test(value)) return undefined;
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return undefined;
  if (url.hash || value.includes('#') || url.search || url.username || url.password) return undefined;
  // URL lower-cases scheme and host and drops the default port; only the trailing slash is ours.
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
