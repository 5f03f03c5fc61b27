/**
 * The MCP side of Portico, mounted into the composition root: per-product MCP servers at
 * `{mcp_url}/{product}`, their public inventory and tool catalogs, and their Protected Resource
 * Metadata. Paths are matched on the path of PUBLIC_MCP_URL only, so the MCP servers may sit on
 * another origin behind a proxy.
 */
import type Koa from 'koa';
import { VERSION, type Mount } from '../app.js';
import { revokedAmong, unusableTokensAmong } from '../db/grant_store.js';
import type { Db } from '../db/connect.js';
import type { Catalog } from '../shared/catalog.js';
import { consolePath } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { AppError } from '../shared/errors.js';
import type { EventBus } from '../shared/events.js';
import { hostCheck, unknownHost } from '../shared/hosts.js';
import type { PorticoState } from '../shared/http.js';
import { clientConfigRoute } from './client_config.js';
import { mcpCors } from './cors.js';
import { McpHost } from './host.js';
import { Pipeline } from './pipeline.js';
import { PrincipalCache } from './principal_cache.js';
import { inventory, listTools, protectedResourceMetadata, type PublicDeps } from './rest.js';

export function mcpMount({ catalog, events, revokedSweepMs = REVOKED_SWEEP_MS }: { catalog: Catalog; events: EventBus; revokedSweepMs?: number }): Mount {
  return (app, context) => {
    const { config, db, log, metrics } = context;
    const isLive = (id: string) => catalog.isLive(id);
    // Revocation reaches every instance as an event, which drops the cached principals (DESIGN.md §4).
    const principals = new PrincipalCache({ maxEntries: 10_000, maxAgeMs: 30_000 });
    const pipeline = new Pipeline({ db, config, catalog, log, metrics, isLive, principals });
    const host = new McpHost({ pipeline, config, catalog, log, version: VERSION, isLive });
    const publicDeps: PublicDeps = { catalog, config, pipeline, version: VERSION, isLive, metadataUrl: (id) => host.metadataUrl(id) };
    metrics.gauge('portico_mcp_sessions', 'Open MCP sessions on this instance', () => [[{}, host.sessions.size]]);

    const announcedLive = new Map(catalog.products.map((p) => [p.id, isLive(p.id)]));
    events.on((event) => {
      // Revocation takes effect at once: cached principals go, the connection's sessions and their GET streams close now.
      if (event.type === 'connection.revoked') {
        principals.dropConnection(event.connectionId);
        void host.sessions.closeConnection(event.connectionId, revoked());
      }
      if (event.type === 'token.revoked') {
        principals.dropToken(event.tokenId);
        host.sessions.closeStreamsOf(event.tokenId);
      }
      // The catalog's liveness follows the surface registry; connected sessions learn of it here
      // (DESIGN.md §5), once per move: the same change may arrive twice, read by this instance's
      // poll and then announced by the instance or command that made it.
      if (event.type === 'surface.changed' && catalog.product(event.product) && announcedLive.get(event.product) !== (event.status === 'live')) {
        announcedLive.set(event.product, event.status === 'live');
        void host.notifyToolsChanged(event.product);
      }
    });
    // While the relay does not hear other instances, revocations may be missed: cache nothing. When
    // it hears them again, the sessions of connections revoked meanwhile close, as the missed
    // events would have closed them (their next request would be refused anyway; their GET streams
    // would otherwise stay open until their tokens expire).
    let missed = false;
    events.onRelayState((listening) => {
      principals.reset(listening);
      if (!listening) missed = true;
      else if (missed) {
        missed = false;
        revokedAmong(db, host.sessions.connectionIds())
          .then((ids) => Promise.all(ids.map((id) => host.sessions.closeConnection(id, revoked()))))
          .catch((err: unknown) => log.warn('checking open sessions after a relay gap failed', { err }));
      }
    });
    context.onClose(sweepRevoked(db, log, revokedSweepMs, {
      connections: () => [...new Set([...host.sessions.connectionIds(), ...principals.connectionIds()])],
      closeConnection: (id) => {
        principals.dropConnection(id);
        return host.sessions.closeConnection(id, revoked());
      },
      tokens: () => [...new Set([...host.sessions.streamTokenIds(), ...principals.tokenIds()])],
      dropToken: (id) => {
        principals.dropToken(id);
        host.sessions.closeStreamsOf(id);
      },
    }));
    context.onDrain(() => host.drain());
    context.onDrained(() => host.close());
    context.onClose(() => pipeline.close());

    const mcpPath = new URL(config.mcpUrl).pathname.replace(/\/+$/, '');
    const metadataPrefix = `${METADATA_ROOT}${mcpPath}/`;
    const productRoute = new RegExp(`^${escapeRegExp(mcpPath)}/([a-z][a-z0-9]*)(/list_tools)?/?$`);

    // Browser clients (CORS) first: every answer of an endpoint a browser may call, refusals included, carries its CORS headers.
    app.use(mcpCors({ catalog, config }));
    // The public documents under {mcp_url} (inventory, tool lists, client configurations, resource
    // metadata) answer only Portico's own names, as every other part does (shared/hosts.ts). The MCP
    // endpoint itself is checked by the host, which answers in JSON-RPC.
    const allowedHost = hostCheck(config);
    const mcpPathSlash = `${mcpPath}/`;
    const isDocument = (path: string) =>
      path === mcpPath || path === mcpPathSlash || path.startsWith(metadataPrefix)
      || (path.startsWith(mcpPathSlash) && /\/(list_tools|client_config)\/?$/.test(path));
    app.use((ctx: Koa.ParameterizedContext<PorticoState>, next: Koa.Next) => {
      // The endpoint's calls (the hot path) pass without a look at the Host here.
      if (isDocument(ctx.path) && !allowedHost(ctx.hostname)) throw unknownHost();
      return next();
    });
    // The client configuration document (shared/client_config.ts), issue 9.
    app.use(clientConfigRoute({ catalog, config }));
    // A mistyped server name (`/mcp/forg`, `/mcp/Forge/list_tools`, its metadata) is told which
    // names there are. Two kinds of path are left to the rest of the application: with the MCP
    // servers at the root of their origin every path would look like a server's, and the console
    // (with its metadata) may answer inside the MCP path (shared/config.ts, checkPaths).
    const servers = catalog.products.map((p) => p.id).join(', ');
    const productPath = /^([^/]+)(?:\/(?:list_tools|client_config))?\/?$/;
    const consoleBase = consolePath(config);
    const isConsoles = (path: string) => path === consoleBase || path.startsWith(`${consoleBase}/`);
    /** `described` is the path asked for (for metadata, the path it would describe); `rest` its part after the MCP path. */
    const unknownProduct = (next: Koa.Next, described: string, rest: string | undefined) => {
      const name = mcpPath && rest !== undefined && !isConsoles(described) ? productPath.exec(rest)?.[1] : undefined;
      if (name === undefined) return next();
      throw new AppError('not_found', `no MCP server named "${name}"; the servers are ${servers} (GET ${config.mcpUrl}/ lists them)`);
    };
    app.use(async (ctx: Koa.ParameterizedContext<PorticoState>, next: Koa.Next) => {
      const path = ctx.path;
      if (path.startsWith(metadataPrefix)) {
        // The endpoint answers with a trailing slash too, and so does its metadata (RFC 9728 §3.3: `resource` is the URL called).
        const [, id, slash] = /^([a-z][a-z0-9]*)(\/?)$/.exec(path.slice(metadataPrefix.length)) ?? [];
        const product = id ? catalog.product(id) : undefined;
        if (!product) return unknownProduct(next, path.slice(METADATA_ROOT.length), path.slice(metadataPrefix.length));
        ctx.state.route = '/.well-known/oauth-protected-resource/mcp/:product';
        readOnly(ctx);
        ctx.body = protectedResourceMetadata(publicDeps, product, slash === '/');
        return;
      }
      if (path === mcpPath || path === `${mcpPath}/`) {
        ctx.state.route = `${mcpPath}/`;
        readOnly(ctx);
        ctx.body = inventory(publicDeps);
        return;
      }
      const match = productRoute.exec(path);
      const product = match ? catalog.product(match[1]) : undefined;
      if (!match || !product) return unknownProduct(next, path, path.startsWith(mcpPathSlash) ? path.slice(mcpPathSlash.length) : undefined);
      if (match[2]) {
        ctx.state.route = `${mcpPath}/:product/list_tools`;
        readOnly(ctx);
        ctx.body = listTools(publicDeps, product);
        return;
      }
      ctx.state.route = `${mcpPath}/:product`;
      // A roadmap server accepts sessions and lists no tools; they appear, with tools/list_changed, when it ships.
      await host.handle(ctx, product.id);
    });
  };
}

/** What a call still running on a revoked connection's session is answered (DESIGN.md §7). */
function revoked(): AppError {
  return new AppError('connection_revoked', 'this connection was revoked; nothing was changed');
}

function readOnly(ctx: Koa.Context): void {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
    ctx.set('Allow', 'GET, HEAD');
    throw new AppError('method_not_allowed', `${ctx.method} is not supported here`);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** RFC 9728 §3.1: the metadata of `{origin}{path}` is at `{origin}/.well-known/oauth-protected-resource{path}`. */
const METADATA_ROOT = '/.well-known/oauth-protected-resource';

/** How often every instance looks for revoked connections it was not told about (ms). */
const REVOKED_SWEEP_MS = 1_000;

/**
 * The fallback for a revocation event that never arrived: the admin CLI's notification lost with
 * its connection or its process (PostgreSQL), its events file not watchable (SQLite), a
 * `token.revoked` whose NOTIFY failed during a database blip. Every REVOKED_SWEEP_MS the
 * connections behind open sessions and cached tokens, and those tokens and the ones open GET
 * streams were opened with, are read from the database; what is found revoked is closed and
 * dropped as the event would have. A request whose token is not cached is refused at once anyway
 * (the grant store is read); this bounds how long a cached token and an open stream outlive a
 * revocation nobody announced. Two indexed queries per second per instance, by primary key, 500
 * ids at a time.
 */
function sweepRevoked(db: Db, log: Logger, everyMs: number, watched: {
  connections: () => string[];
  closeConnection: (connectionId: string) => Promise<void>;
  tokens: () => string[];
  dropToken: (tokenId: string) => void;
}): () => void {
  let running = false;
  const sweep = async () => {
    const connections = watched.connections();
    for (let i = 0; i < connections.length; i += 500) {
      for (const id of await revokedAmong(db, connections.slice(i, i + 500))) await watched.closeConnection(id);
    }
    const tokens = watched.tokens();
    for (let i = 0; i < tokens.length; i += 500) {
      for (const id of await unusableTokensAmong(db, tokens.slice(i, i + 500))) watched.dropToken(id);
    }
  };
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweep().catch((err: unknown) => log.warn('checking open sessions for revoked connections failed', { err })).finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
