/**
 * CORS for browser-based MCP clients (Fetch standard, "CORS protocol").
 *
 * - The public documents (inventory, list_tools, client_config, Protected Resource Metadata) are
 *   readable from any origin, their refusals included (shared/http.ts publicDocumentCors).
 * - The MCP endpoint `{mcp_url}/{product}` answers browsers only from Portico's own origins and
 *   those listed in MCP_CORS_ORIGINS, the same set the host's Origin check admits (MCP transports,
 *   "Security Warning": Origin validation against DNS rebinding). No credentials mode: the token
 *   is a bearer header, never a cookie.
 */
import type Koa from 'koa';
import type { Catalog } from '../shared/catalog.js';
import type { Config } from '../shared/config.js';
import { AppError } from '../shared/errors.js';
import { publicDocumentCors, type PorticoState } from '../shared/http.js';

/** Request headers a Streamable HTTP client sends (MCP transports 2025-11-25). */
const MCP_REQUEST_HEADERS = ['authorization', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
/** Response headers a browser client must be able to read: the session id and the OAuth challenges. */
const MCP_EXPOSED_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'www-authenticate', 'retry-after', 'x-request-id'];

export function mcpCors({ catalog, config }: { catalog: Catalog; config: Config }): Koa.Middleware<PorticoState> {
  const mcpPath = new URL(config.mcpUrl).pathname.replace(/\/+$/, '');
  const escaped = mcpPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const endpoint = new RegExp(`^${escaped}/([a-z][a-z0-9]*)/?$`);
  const document = new RegExp(`^(?:${escaped}/?|${escaped}/([a-z][a-z0-9]*)/(?:list_tools|client_config)/?|/\\.well-known/oauth-protected-resource${escaped}/([a-z][a-z0-9]*)/?)$`);
  const allowedOrigins = new Set([config.authUrl, config.mcpUrl, config.apiUrl].map((url) => new URL(url).origin).concat(config.mcpCorsOrigins));

  return async (ctx, next) => {
    const path = ctx.path;
    const doc = document.exec(path);
    const docProduct = doc?.[1] ?? doc?.[2];
    if (doc && docProduct && !catalog.product(docProduct)) return next();
    if (doc) return publicDocumentCors(ctx, next);

    const product = endpoint.exec(path);
    if (!product || !catalog.product(product[1])) return next();
    const origin = ctx.get('origin');
    ctx.vary('Origin');
    if (!origin) return next();
    if (!allowedOrigins.has(origin)) {
      // The host refuses such requests too; a preflight is refused here so that nothing reaches it.
      if (ctx.method === 'OPTIONS') throw new AppError('forbidden', 'requests from this Origin are not accepted (see MCP_CORS_ORIGINS)');
      return next();
    }
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Expose-Headers', MCP_EXPOSED_HEADERS.join(', '));
    if (ctx.method !== 'OPTIONS') return next();
    ctx.state.route = 'cors.preflight';
    ctx.set({
      'Access-Control-Allow-Methods': 'GET, POST, DELETE',
      'Access-Control-Allow-Headers': MCP_REQUEST_HEADERS.join(', '),
      'Access-Control-Max-Age': '600',
    });
    ctx.status = 204;
  };
}
