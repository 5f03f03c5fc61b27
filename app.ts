/**
 * The composition root: one Koa app that later parts (authorization server, MCP host, console)
 * are mounted into, plus the operational endpoints every part shares.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import Koa from 'koa';
import { randomBytes } from 'node:crypto';
import { consolePath, publicUrlWarnings, type Config } from './shared/config.js';
import type { Logger } from './shared/log.js';
import { createLogger } from './shared/log.js';
import { MetricsRegistry } from './shared/metrics.js';
import { refuseNul, requestIdOf, restErrors, type PorticoState } from './shared/http.js';
import { AppError, restErrorBody } from './shared/errors.js';
import { connectDatabase, poolStats, ready, type Db } from './db/connect.js';
import { translateDbError } from './db/errors.js';
import { exclusively, migrateLatest } from './db/migrate.js';
import { keysInOrder, loadOrCreateCookieKeys, loadOrCreateSecret } from './db/secrets.js';
import { seedDemoIfEmpty, type DemoCredential, type DemoSeeder } from './db/demo.js';

export const VERSION = '0.1.0';

/** How long shutdown waits for in-flight requests before it closes their connections. */
export const DRAIN_MS = 10_000;

export interface Secrets {
  /** Keys for signed cookies (the first signs; all verify). */
  cookieKeys: string[];
  /** HMAC key for CSRF tokens and other server-side MACs. */
  macKey: string;
}

/** What every mounted part receives. */
export interface PorticoContext {
  config: Config;
  db: Db;
  log: Logger;
  metrics: MetricsRegistry;
  secrets: Secrets;
  /**
   * Called as shutdown begins, once the server has stopped accepting connections: ends what would
   * never finish by itself (open streams) and refuses new work, so in-flight requests can drain.
   */
  onDrain(hook: () => Promise<void> | void): void;
  /**
   * Called on shutdown once the drain is over: in-flight requests have finished, or the drain's
   * deadline passed and their connections were cut. Ends the work that outlived it (a tool call
   * still in its handler), before any onClose hook: on SQLite such a call holds the pool's one
   * connection, which the close hooks need.
   */
  onDrained(hook: () => Promise<void> | void): void;
  /** Called on shutdown after the onDrained hooks, in reverse order of registration, before the pool closes. */
  onClose(hook: () => Promise<void> | void): void;
}

export type Mount = (app: Koa<PorticoState>, context: PorticoContext) => Promise<void> | void;

export interface Portico {
  app: Koa<PorticoState>;
  server: http.Server;
  context: PorticoContext;
  url: string;
  demoCredentials?: DemoCredential[];
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  mounts?: Mount[];
  db?: Db;
  /** Products' sample rows for the demo dataset (see mounts.ts defaultSeeders). */
  seeders?: DemoSeeder[];
  /**
   * Aborted to stop a start under way (a signal during start-up, main.ts): waiting for the turn
   * to migrate ends at once, the step under way (the migrations, a mount) finishes or rolls back,
   * no further step begins, what was opened is closed, and the start rejects with the signal's
   * reason. Once listening, the start completes: the demo's passwords are shown only once.
   */
  signal?: AbortSignal;
}

export async function loadSecrets(db: Db): Promise<Secrets> {
  const random = () => randomBytes(32).toString('base64url');
  const cookieKeys = keysInOrder(await loadOrCreateCookieKeys(db));
  const macKey = await loadOrCreateSecret(db, 'mac_key', random);
  return { cookieKeys, macKey };
}

/** Opens the database, migrates, seeds the demo, mounts every part and listens. */
export async function startPortico(config: Config, options: StartOptions = {}): Promise<Portico> {
  const log = options.log ?? createLogger(config.logLevel);
  const db = options.db ?? connectDatabase(config.database);
  const drainHooks: Array<() => Promise<void> | void> = [];
  const drainedHooks: Array<() => Promise<void> | void> = [];
  const closeHooks: Array<() => Promise<void> | void> = [];
  let server: http.Server | undefined;
  // /readyz says ready only once the start is complete (the demo seeded, after listening).
  let phase: Phase = 'starting';
  const nextStep = () => options.signal?.throwIfAborted();
  for (const warning of publicUrlWarnings(config)) log.warn(warning);
  try {
    // Instances starting together on one PostgreSQL take turns (db/migrate.ts exclusively).
    const applied = await exclusively(db, async () => {
      nextStep();
      return migrateLatest(db);
    }, options.signal);
    if (applied.length) log.info('migrations applied', { migrations: applied });
    nextStep();
    const secrets = await loadSecrets(db);
    const metrics = new MetricsRegistry();
    const context: PorticoContext = { config, db, log, metrics, secrets, onDrain: (hook) => drainHooks.push(hook), onDrained: (hook) => drainedHooks.push(hook), onClose: (hook) => closeHooks.push(hook) };

    // Behind TRUST_PROXY=n proxies the client's address is the n-th X-Forwarded-For entry from the
    // right (what those proxies appended): the entries before it are the client's own writing, and
    // the per-address limits (registration, sign-in) key on ctx.ip.
    const app = new Koa<PorticoState>({ keys: secrets.cookieKeys, proxy: config.trustProxy > 0, maxIpsCount: config.trustProxy });
    app.silent = true;
    secureByPublicUrl(app, config);
    app.use(observe(context));
    app.use(restErrors(log, translateDbError));
    app.use(refuseNul);
    app.use(operations(context, () => phase));
    for (const mount of options.mounts ?? []) {
      nextStep();
      await mount(app, context);
    }
    app.use(async (ctx) => {
      // Anything no part claimed. Parts call next() only for paths they do not own.
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError('not_found', `no route for ${ctx.method} ${ctx.path}`);
    });

    // Slow senders (slowloris) are cut off once the whole request, headers included, took longer
    // than REQUEST_TIMEOUT_MS (Node's own headers time-out would cut headers at 30 s whatever it
    // says); Node checks at connectionsCheckingInterval, so that follows the configured time-out.
    server = http.createServer({
      headersTimeout: config.requestTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.requestTimeoutMs / 4))),
    }, app.callback());
    server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => answerUnparsable(error, socket, log));
    // Node's default of 5 s races a client's next request after a pause: undici closes its idle
    // sockets a second before the server's advertised time-out, later if its event loop is busy, and
    // a POST on a socket the server just closed fails unretried ("fetch failed"; measured: 6 of 240
    // requests after 3-6 s pauses with short client stalls, none at 65 s).
    server.keepAliveTimeout = config.keepAliveTimeoutMs;
    const sockets = new Set<Socket>();
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    const listening = server;
    nextStep();
    await new Promise<void>((resolve, reject) => {
      // Marked, so that main.ts tells a listen failure (PORT, HOST) from one of the database (DATABASE_URL).
      listening.once('error', (error) => reject(Object.assign(error, { listening: true })));
      listening.listen(config.port, config.host, () => resolve());
    });
    // The demo is seeded once the port is ours: its passwords are shown once, so a start that
    // could still fail must not have made them.
    const demoCredentials = config.demo ? await exclusively(db, () => seedDemoIfEmpty(db, { password: config.demoPassword, seeders: options.seeders })) : undefined;
    phase = 'serving';
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;

    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        // Stop accepting, end streams and refuse new work, let in-flight requests finish (at most
        // DRAIN_MS), then close the parts and the pool.
        const drained = new Promise<void>((resolve) => listening.close(() => resolve()));
        for (const hook of drainHooks) await hook();
        // Kept-alive connections go as soon as their last response is out.
        const idle = setInterval(() => listening.closeIdleConnections(), 50);
        listening.closeIdleConnections();
        const deadline = setTimeout(() => sockets.forEach((s) => s.destroy()), DRAIN_MS);
        deadline.unref();
        await drained;
        clearTimeout(deadline);
        clearInterval(idle);
        for (const hook of drainedHooks) await hook();
        for (const hook of closeHooks.reverse()) await hook();
        if (!options.db) await db.destroy();
      })());

    return { app, server: listening, context, url, demoCredentials, close };
  } catch (error) {
    // A start that failed (the port taken, a migration refused) leaves nothing running: the parts
    // mounted so far (the event relay's LISTEN connection, timers) are closed before the pool.
    if (server?.listening) {
      server.close();
      server.closeAllConnections();
    }
    for (const hook of [...drainedHooks, ...closeHooks.reverse()]) await Promise.resolve().then(hook).catch(() => undefined);
    if (!options.db) await db.destroy().catch(() => undefined);
    throw error;
  }
}

/**
 * Requests Node's parser refuses before any middleware sees them. Headers over Node's limit (16 KB;
 * an authorize URL with an enormous `scope` or `state`, say) get 431 with Portico's error body
 * and code, not a bare status line; everything else gets what Node itself would send (408 for a
 * request that took too long, 413 for chunk extensions over the limit, 400 otherwise). The
 * connection is closed either way, on a fresh or a kept-alive connection alike.
 */
function answerUnparsable(error: Error & { code?: string }, socket: Duplex, log: Logger): void {
  // Node's own rule: answer unless the socket is gone or a response on it has begun (a kept-alive
  // connection whose earlier responses are complete is answered too).
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  const requestId = requestIdOf(undefined);
  log.info('request refused by the HTTP parser', { request_id: requestId, code: error.code });
  let head: string;
  let body = '';
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const failure = new AppError('headers_too_large', `the request line and headers are over the server's limit of ${http.maxHeaderSize} bytes; send large values in a POST body`);
    body = JSON.stringify(restErrorBody(failure, requestId));
    head = `HTTP/1.1 ${failure.status} ${http.STATUS_CODES[failure.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  } else {
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? 413 : 400;
    head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n`;
  }
  // Written, then the socket is closed once the answer is flushed (not left half-open until the time-out).
  socket.write(`${head}Connection: close\r\n\r\n${body}`);
  (socket as Socket).destroySoon();
}

/** One JSON log line and one histogram observation per request. */
function observe({ config, log, metrics, db }: PorticoContext) {
  const families = routeFamilies(config);
  const requests = metrics.histogram('portico_http_request_duration_seconds', 'HTTP requests by route and status');
  metrics.gauge('portico_db_pool_connections', 'Database pool connections by state', () => {
    const stats = poolStats(db);
    return [[{ state: 'used' }, stats.used], [{ state: 'free' }, stats.free], [{ state: 'pending' }, stats.pending], [{ state: 'max' }, stats.max]];
  });
  metrics.gauge('portico_process_resident_memory_bytes', 'Resident set size of this process', () => [[{}, process.memoryUsage.rss()]]);
  metrics.gauge('portico_process_heap_used_bytes', 'V8 heap in use by this process', () => [[{}, process.memoryUsage().heapUsed]]);
  return async (ctx: Koa.ParameterizedContext<PorticoState>, next: Koa.Next) => {
    const started = process.hrtime.bigint();
    ctx.state.requestId = requestIdOf(ctx.get('x-request-id') || undefined);
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = ctx.state.route ?? routeFamily(ctx.path, families);
      requests.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
      log.info('request', {
        request_id: ctx.state.requestId, method: ctx.method, path: ctx.path, route, status: ctx.status,
        duration_ms: Math.round(seconds * 10_000) / 10,
      });
    }
  };
}

/**
 * Bounded label values for routes nobody named: the first path segment, when it is one Portico
 * serves (the OAuth endpoints, the well-known documents, the MCP and API paths' first segments);
 * anything else is `/other`, so a path a caller made up adds no series to /metrics.
 */
function routeFamily(path: string, families: ReadonlySet<string>): string {
  const first = `/${path.split('/')[1] ?? ''}`;
  return families.has(first) ? first : '/other';
}

function routeFamilies(config: Config): Set<string> {
  const firstOf = (url: string) => `/${new URL(url).pathname.split('/')[1] ?? ''}`;
  return new Set(['/oauth', '/.well-known', firstOf(config.mcpUrl), firstOf(config.apiUrl)].filter((family) => family !== '/'));
}

/**
 * Cookies are Secure when the public URL a request was addressed to is https, even behind a
 * TLS-terminating proxy that talks plain http to Portico (with TRUST_PROXY=0 its X-Forwarded-Proto
 * is not believed). Koa's cookies and oidc-provider's ask the request (ctx.secure), so the app's
 * requests answer it by the public URL: under {api_url}/mcp the console's, elsewhere the
 * authorization server's, the other part that sets cookies. A getter rather than a middleware:
 * only a request that sets a cookie asks, and the MCP servers' requests (the hot path) take no
 * extra step.
 */
function secureByPublicUrl(app: Koa<PorticoState>, config: Config): void {
  const consoleBase = consolePath(config);
  const insideConsole = `${consoleBase}/`;
  const [consoleIsHttps, authIsHttps] = [config.apiUrl, config.authUrl].map((url) => new URL(url).protocol === 'https:');
  const bySocketOrProxy = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(app.request), 'secure')!.get!;
  Object.defineProperty(app.request, 'secure', {
    get(this: Koa.Request): boolean {
      const path = this.path;
      return (path === consoleBase || path.startsWith(insideConsole) ? consoleIsHttps : authIsHttps) || bySocketOrProxy.call(this);
    },
  });
}

type Phase = 'starting' | 'serving';

type OperationalContext = Koa.ParameterizedContext<PorticoState>;

/** The operational endpoints, by path: each is read-only (GET and HEAD). */
function operationalEndpoints({ db, metrics }: PorticoContext, phaseOf: () => Phase): ReadonlyMap<string, (ctx: OperationalContext) => Promise<void> | void> {
  return new Map([
    ['/healthz', (ctx: OperationalContext) => {
      ctx.body = { status: 'ok', version: VERSION };
    }],
    ['/readyz', async (ctx: OperationalContext) => {
      if (phaseOf() === 'starting') {
        ctx.status = 503;
        ctx.body = { status: 'unavailable', reason: 'starting' };
        return;
      }
      try {
        await withDeadline(ready(db), READY_DEADLINE_MS);
        ctx.body = { status: 'ready', version: VERSION };
      } catch (error) {
        ctx.status = 503;
        ctx.body = { status: 'unavailable', reason: error === DEADLINE ? `the database did not answer within ${READY_DEADLINE_MS} ms` : 'database unreachable' };
      }
    }],
    ['/metrics', (ctx: OperationalContext) => {
      ctx.type = 'text/plain; version=0.0.4';
      ctx.body = metrics.render();
    }],
  ]);
}

function operations(context: PorticoContext, phaseOf: () => Phase) {
  const endpoints = operationalEndpoints(context, phaseOf);
  return async (ctx: OperationalContext, next: Koa.Next) => {
    const endpoint = endpoints.get(ctx.path);
    if (!endpoint) return next();
    ctx.state.route = ctx.path;
    // The route exists, for reading only: 405 with Allow, as every other route answers (docs/errors.md), not "no route".
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new AppError('method_not_allowed', `${ctx.method} is not supported here; use GET or HEAD`, { headers: { Allow: 'GET, HEAD' } });
    }
    await endpoint(ctx);
  };
}

/** How long /readyz waits for the database before saying the instance cannot serve (a pool that is all busy, a locked table). */
const READY_DEADLINE_MS = 2_000;
const DEADLINE = Symbol('deadline');

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(DEADLINE), ms);
  });
  work.catch(() => undefined); // settled later than the deadline: nobody waits for it any more
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
