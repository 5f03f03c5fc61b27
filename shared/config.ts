/**
 * Configuration, read and validated once at start (DESIGN.md §1).
 * A bad value throws a ConfigError that names the variable; main.ts prints it and exits.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { LOG_LEVELS, type LogLevel } from './log.js';

/** DATABASE_READ_TIMEOUT_MS when unset (db/connect.ts uses it for configs built without loadConfig). */
export const DEFAULT_READ_TIMEOUT_MS = 15_000;
/**
 * DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS when unset: this, or TOOL_TIMEOUT_MS and a margin if
 * that is longer (a writing tool's handler runs inside its transaction).
 */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/** lock_timeout is the idle-in-transaction time-out and this much: an idle holder's session ends first. */
const LOCK_TIMEOUT_MARGIN_MS = 1_000;
/** lock_timeout when the config was built without loadConfig. */
export const DEFAULT_LOCK_TIMEOUT_MS = DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS + LOCK_TIMEOUT_MARGIN_MS;
const IDLE_IN_TRANSACTION_MARGIN_MS = 30_000;

export type DatabaseConfig =
  | { kind: 'sqlite'; filename: string }
  | {
      kind: 'postgres'; url: string; schema?: string; preparedStatements?: boolean;
      /** Longest a quick read on the read pipe may run before PostgreSQL cancels it (db/connect.ts); default 15 s. */
      readTimeoutMs?: number;
      /**
       * Longest a transaction of this instance may sit idle between statements before PostgreSQL
       * ends its session and so releases its locks (db/connect.ts); default 60 s.
       */
      idleInTransactionTimeoutMs?: number;
      /** Longest a statement waits for a lock (PostgreSQL's lock_timeout; db/connect.ts): the idle-in-transaction time-out and 1 s; default 61 s. */
      lockTimeoutMs?: number;
    };

export interface Config {
  port: number;
  host: string;
  authUrl: string;
  mcpUrl: string;
  apiUrl: string;
  database: DatabaseConfig;
  dataDir: string;
  /**
   * How many proxies stand in front (TRUST_PROXY): 0 trusts no X-Forwarded-* header; n trusts the
   * forwarded host and scheme and takes the client's address as the n-th X-Forwarded-For entry from
   * the right (what the nearest proxies appended), never one the client wrote itself.
   */
  trustProxy: number;
  demo: boolean;
  demoPassword?: string;
  logLevel: LogLevel;
  resourceUriScheme: string;
  bodyLimitBytes: number;
  rateLimitPerMinute: number;
  toolTimeoutMs: number;
  /** How long a person has to answer a destructive tool's confirmation asked through their client (elicitation). */
  confirmationTimeoutMs: number;
  sessionIdleMs: number;
  maxSessionsPerConnection: number;
  /** Open MCP sessions of one person on one instance, across their connections. */
  maxSessionsPerUser: number;
  /** Time allowed to receive a whole request (headers and body); slow senders are cut off (checklist R11). */
  requestTimeoutMs: number;
  /**
   * How long an idle kept-alive connection stays open for its next request. Longer than a load
   * balancer's own (60 s at AWS), and long enough that a client's request after a pause does not
   * meet the server closing the socket (Node's 5 s lost ~2.5% of such requests, app.ts).
   */
  keepAliveTimeoutMs: number;
  /** Extra host names the MCP servers answer to, besides those of the public URLs and loopback ('*': any). */
  allowedHosts: string[];
  /** Browser origins, besides Portico's own, allowed to call the MCP servers with CORS (`MCP_CORS_ORIGINS`). */
  mcpCorsOrigins: string[];
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  // Port 0 (any free port) cannot be named in the URLs clients are given: those come from PUBLIC_AUTH_URL then.
  if (port === 0 && !env.PUBLIC_AUTH_URL?.trim()) throw new ConfigError('PORT', '0 (any free port) needs PUBLIC_AUTH_URL, since the URLs given to clients must name the port');
  const authUrl = baseUrl(env, 'PUBLIC_AUTH_URL', `http://localhost:${port}`);
  // The OAuth endpoints and their metadata are served at the root of {auth_url} (DESIGN.md §1).
  if (new URL(authUrl).pathname !== '/') throw new ConfigError('PUBLIC_AUTH_URL', 'must be an origin without a path (the OAuth endpoints and metadata are served at its root); PUBLIC_MCP_URL and PUBLIC_API_URL may have paths');
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const toolTimeoutMs = integer(env, 'TOOL_TIMEOUT_MS', 15_000, 100, 600_000);
  const mcpUrl = baseUrl(env, 'PUBLIC_MCP_URL', `${authUrl}/mcp`);
  const apiUrl = baseUrl(env, 'PUBLIC_API_URL', `${authUrl}/api`);
  checkPaths(mcpUrl, apiUrl);
  // DATA_DIR as written is checked always; the default ./data only where it is used.
  if (env.DATA_DIR || !env.DATABASE_URL?.trim()) checkDataDir(dataDir);
  return {
    port,
    host: listenHost(env),
    authUrl,
    mcpUrl,
    apiUrl,
    database: database(env, dataDir, toolTimeoutMs),
    dataDir,
    trustProxy: proxyHops(env),
    demo: onOff(env, 'DEMO', true),
    demoPassword: demoPassword(env),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    resourceUriScheme: uriScheme(env),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    toolTimeoutMs,
    // Under the MCP SDK client's own request time-out (DEFAULT_REQUEST_TIMEOUT_MSEC, 60 s, counted
    // from sending tools/call): the client hears "timeout, nothing was changed" before it gives up
    // on the call, and no answer the person gives can commit a change the client reports as lost.
    confirmationTimeoutMs: integer(env, 'CONFIRMATION_TIMEOUT_MS', 50_000, 1_000, 3_600_000),
    sessionIdleMs: integer(env, 'SESSION_IDLE_MS', 30 * 60_000, 1_000, 24 * 3_600_000),
    maxSessionsPerConnection: integer(env, 'MAX_SESSIONS_PER_CONNECTION', 10, 1, 1_000),
    maxSessionsPerUser: integer(env, 'MAX_SESSIONS_PER_USER', 50, 1, 10_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 60_000, 500, 3_600_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, 1_000, 3_600_000),
    allowedHosts: hostList(env, 'ALLOWED_HOSTS'),
    mcpCorsOrigins: originList(env, 'MCP_CORS_ORIGINS'),
  };
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `expected a whole number, got ${JSON.stringify(raw)}`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `expected 1/0, true/false, yes/no or on/off, got ${JSON.stringify(env[name])}`);
}

/** TRUST_PROXY: a number of proxies (0-10); the words of `boolean` mean 0 and 1. */
function proxyHops(env: Env): number {
  const raw = env.TRUST_PROXY?.trim().toLowerCase();
  if (raw && /^\d+$/.test(raw)) return integer(env, 'TRUST_PROXY', 0, 0, 10);
  try {
    return boolean(env, 'TRUST_PROXY', false) ? 1 : 0;
  } catch {
    throw new ConfigError('TRUST_PROXY', `expected the number of proxies in front (0-10), or 1/0, true/false, yes/no or on/off, got ${JSON.stringify(env.TRUST_PROXY)}`);
  }
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  return boolean(env, name, fallback);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got ${JSON.stringify(env[name])}`);
  }
  return raw as T;
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The address to bind: an IP address or a host name. */
function listenHost(env: Env): string {
  const host = env.HOST?.trim() || '0.0.0.0';
  if (!net.isIP(host) && !HOST_NAME.test(host)) throw new ConfigError('HOST', `not an IP address or host name: ${JSON.stringify(host)}`);
  return host;
}

function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `not a valid URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, 'must be an http or https URL');
  // `search` and `hash` are empty for a bare `?` or `#`, which href keeps: any `?` or `#` there is one.
  if (/[?#]/.test(url.href) || url.username || url.password) {
    throw new ConfigError(name, 'must not carry a query, fragment or credentials');
  }
  return url.href.replace(/\/+$/, '');
}

const pathOf = (url: string) => new URL(url).pathname.replace(/\/+$/, '');
/** `path` is `prefix` or below it, segment by segment (`/oauthmcp` is not below `/oauth`). */
const within = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** Where the console answers, `{api_url}/mcp` (DESIGN.md §8), as a path. */
export function consolePath(config: Pick<Config, 'apiUrl'>): string {
  return `${pathOf(config.apiUrl)}/mcp`;
}

/** Paths that other parts answer whatever the configuration, and what they are. */
const RESERVED_PATHS: ReadonlyArray<[path: string, owner: string]> = [
  ['/oauth', "the authorization server's endpoints"],
  ['/.well-known', 'the metadata documents'],
  ['/healthz', 'an operational endpoint'],
  ['/readyz', 'an operational endpoint'],
  ['/metrics', 'an operational endpoint'],
];

/**
 * Portico routes by path whatever the host, and the MCP servers answer before the other parts: an
 * MCP path at or inside the console's would answer the console's pages, and either part inside a
 * reserved path would shadow or be shadowed by its owner. The console inside the MCP path is
 * fine: there the MCP servers answer only their products' names, and no product is called `mcp`.
 */
function checkPaths(mcpUrl: string, apiUrl: string): void {
  const mcp = pathOf(mcpUrl);
  const consoleBase = consolePath({ apiUrl });
  for (const [variable, part, partPath] of [['PUBLIC_MCP_URL', 'the MCP servers', mcp], ['PUBLIC_API_URL', 'the console', consoleBase]] as const) {
    const reserved = RESERVED_PATHS.find(([prefix]) => within(partPath, prefix));
    if (reserved) throw new ConfigError(variable, `${part} would answer at ${partPath}, inside ${reserved[0]} (${reserved[1]}); choose another path`);
  }
  if (within(mcp, consoleBase)) {
    const where = mcp === consoleBase ? 'is' : 'is inside';
    throw new ConfigError('PUBLIC_MCP_URL', `its path ${mcp} ${where} the console's, ${consoleBase} (PUBLIC_API_URL's path and /mcp): the MCP servers would answer the console's pages; give PUBLIC_MCP_URL or PUBLIC_API_URL another path`);
  }
}

/**
 * What start-up logs as warnings about the public URLs (app.ts): a mix of http and https works,
 * but what clients send to the http ones (bearer tokens, sign-in cookies) travels unencrypted.
 */
export function publicUrlWarnings(config: Pick<Config, 'authUrl' | 'mcpUrl' | 'apiUrl'>): string[] {
  const urls = [['PUBLIC_AUTH_URL', config.authUrl], ['PUBLIC_MCP_URL', config.mcpUrl], ['PUBLIC_API_URL', config.apiUrl]] as const;
  const plain = urls.filter(([, url]) => url.startsWith('http:')).map(([variable]) => variable);
  const tls = urls.filter(([, url]) => url.startsWith('https:')).map(([variable]) => variable);
  if (!plain.length || !tls.length) return [];
  return [`public URLs mix http and https (http: ${plain.join(', ')}; https: ${tls.join(', ')}): what clients send to the http ones (bearer tokens, cookies) is not encrypted`];
}

function hostList(env: Env, name: string): string[] {
  const names = (env[name] ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  for (const host of names) {
    if (host !== '*' && !/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/.test(host)) throw new ConfigError(name, `expected host names separated by commas, got ${JSON.stringify(host)}`);
  }
  return names;
}

/** Exact origins (`https://app.example.com`, `http://localhost:6274`) separated by commas; no wildcard. */
function originList(env: Env, name: string): string[] {
  const parts = (env[name] ?? '').split(',').map((o) => o.trim()).filter(Boolean);
  return parts.map((part) => {
    const url = URL.parse(part);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== part.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigError(name, `expected origins such as https://app.example.com (scheme, host and port only) separated by commas, got ${JSON.stringify(part)}`);
    }
    return url.origin;
  });
}

/**
 * The first path on the way to `dir` that is there but is not a directory, if any. db/connect.ts
 * makes the SQLite file's directory when it is missing; a file in the way fails that with the
 * system's EEXIST or ENOTDIR, which names a path but not the variable to change.
 */
function fileInTheWay(dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(at);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Not there yet (made at start), or below a file: look further up. Anything else, such as
      // EACCES, is the system's to report when the directory is used.
      if ((code === 'ENOENT' || code === 'ENOTDIR') && path.dirname(at) !== at) continue;
      return undefined;
    }
    return stat.isDirectory() ? undefined : at;
  }
}

function checkDataDir(dataDir: string): void {
  const file = fileInTheWay(dataDir);
  if (!file) return;
  const problem = file === dataDir ? `${dataDir} is a file, not a directory` : `${dataDir} cannot be a directory, as ${file} is a file`;
  throw new ConfigError('DATA_DIR', `${problem}: DATA_DIR must name a directory (made if missing), where the embedded SQLite database is kept`);
}

function database(env: Env, dataDir: string, toolTimeoutMs: number): DatabaseConfig {
  // PostgreSQL's settings are checked on SQLite too, where they do nothing: a bad value should
  // stop the process the day it is written, not the day the deployment moves to PostgreSQL.
  const postgres = postgresSettings(env, toolTimeoutMs);
  const raw = env.DATABASE_URL?.trim();
  if (!raw) return { kind: 'sqlite', filename: path.join(dataDir, 'portico.sqlite') };
  if (raw.startsWith('sqlite:')) {
    const rest = raw.slice('sqlite:'.length);
    // `sqlite:///var/lib/x.sqlite` is a URL with an empty host and an absolute path. After `//`
    // anything else is where a URL names a host: `sqlite://./data/x.sqlite` would be /data/x.sqlite.
    if (/^\/\/(?!\/)/.test(rest)) {
      throw new ConfigError('DATABASE_URL', `sqlite:// must be followed by an absolute path (sqlite:///var/lib/portico/portico.sqlite); for a path relative to the working directory write sqlite:${rest.slice(2)}`);
    }
    const filename = rest.replace(/^\/\/(?=\/)/, '');
    if (!filename) throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, e.g. sqlite:./data/portico.sqlite');
    if (filename === ':memory:') return { kind: 'sqlite', filename };
    const resolved = path.resolve(filename);
    const file = fileInTheWay(path.dirname(resolved));
    if (file) throw new ConfigError('DATABASE_URL', `the SQLite file ${resolved} cannot be made there, as ${file} is a file, not a directory`);
    return { kind: 'sqlite', filename: resolved };
  }
  if (raw.startsWith('postgres://') || raw.startsWith('postgresql://')) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('DATABASE_URL', 'not a valid postgres:// URL');
    }
    return { kind: 'postgres', url: raw, ...postgres };
  }
  throw new ConfigError('DATABASE_URL', 'expected sqlite:<path> or postgres://…');
}

/**
 * The one-shot commands (npm run admin, npm run migrate) refuse an in-memory SQLite database: it is
 * thrown away when the command exits, so what the command reports as done is kept nowhere, and a
 * server cannot share it. The server itself may run on one (a demo that keeps nothing): its
 * database lives as long as it does.
 */
export function requireKeptDatabase(database: DatabaseConfig): void {
  if (database.kind !== 'sqlite' || database.filename !== ':memory:') return;
  throw new ConfigError('DATABASE_URL', 'sqlite::memory: is an in-memory database, which is not kept when the command exits: write the path of a file (sqlite:/path/to/file), or leave DATABASE_URL unset for $DATA_DIR/portico.sqlite');
}

function postgresSettings(env: Env, toolTimeoutMs: number) {
  const idleInTransactionTimeoutMs = integer(
    env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', Math.max(DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, toolTimeoutMs + IDLE_IN_TRANSACTION_MARGIN_MS), 100, 86_400_000,
  );
  if (idleInTransactionTimeoutMs <= toolTimeoutMs) {
    throw new ConfigError('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', `must be longer than TOOL_TIMEOUT_MS (${toolTimeoutMs}): a writing tool's handler runs inside its transaction`);
  }
  return {
    // A lock held by an idle transaction is freed by PostgreSQL after idleInTransactionTimeoutMs;
    // one held by a busy session (a migration, a manual LOCK) is not: no statement waits longer
    // than that plus a second (55P03 is then `unavailable`).
    lockTimeoutMs: idleInTransactionTimeoutMs + LOCK_TIMEOUT_MARGIN_MS,
    preparedStatements: boolean(env, 'DATABASE_PREPARED_STATEMENTS', true),
    readTimeoutMs: integer(env, 'DATABASE_READ_TIMEOUT_MS', DEFAULT_READ_TIMEOUT_MS, 100, 600_000),
    idleInTransactionTimeoutMs,
  };
}

function demoPassword(env: Env): string | undefined {
  const raw = env.DEMO_PASSWORD;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 8) throw new ConfigError('DEMO_PASSWORD', 'must be at least 8 characters');
  // Every demo account's password: the password rule's limit (db/accounts.ts), checked before anything starts.
  if (raw.length > 1024) throw new ConfigError('DEMO_PASSWORD', 'must be at most 1024 characters');
  return raw;
}

function uriScheme(env: Env): string {
  const raw = env.RESOURCE_URI_SCHEME?.trim() || 'portico';
  if (!/^[a-z][a-z0-9+.-]*$/.test(raw)) throw new ConfigError('RESOURCE_URI_SCHEME', 'must be a URI scheme such as portico');
  return raw;
}
