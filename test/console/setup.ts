/** A console-only Portico (no auth or MCP mounts needed) with two tenants, people and connections. */
import { buildCatalog } from '../../shared/catalog.js';
import { EventBus, type PorticoEvent } from '../../shared/events.js';
import { consoleMount } from '../../auth/console/index.js';
import { addMembership, createTenant, createUser } from '../../db/accounts.js';
import { CONSOLE_SCOPES } from '../../shared/console_scopes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { issueAccessToken, type IssuedToken } from '../helpers/grants.js';
import type { DbKind } from '../helpers/db.js';
import { rememberSecret } from '../helpers/secrets.js';
import { CookieJar } from '../helpers/oauth.js';

export const PASSWORD = 'console-test-password';
rememberSecret(PASSWORD);
export const ALL_CONSOLE_SCOPES = Object.keys(CONSOLE_SCOPES);

export interface ConsoleFixture {
  server: TestServer;
  events: EventBus;
  published: PorticoEvent[];
  tenants: { acme: string; globex: string };
  users: Record<'acmeAdmin' | 'ann' | 'bob' | 'globexAdmin' | 'multi', string>;
  /** forge connections, one per person named. */
  forge: Record<'ann' | 'bob' | 'globexAdmin', IssuedToken>;
  consoleToken(user: keyof ConsoleFixture['users'], tenant: 'acme' | 'globex', scopes?: string[]): Promise<string>;
  api(path: string, token: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function startConsole(kind: DbKind): Promise<ConsoleFixture> {
  const events = new EventBus();
  const published: PorticoEvent[] = [];
  events.on((event) => published.push(event));
  const server = await startTestServer(kind, { mounts: [consoleMount({ catalog: buildCatalog([]), events })] });
  const { db, config } = server.portico.context;
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme Corporation' });
  const globex = await createTenant(db, { slug: 'globex', name: 'Globex Industries' });
  const person = async (email: string, memberships: Array<[string, 'admin' | 'member']>) => {
    const user = await createUser(db, { email, password: PASSWORD });
    for (const [tenantId, role] of memberships) await addMembership(db, { userId: user.id, tenantId, role });
    return user.id;
  };
  const users = {
    acmeAdmin: await person('admin@acme.example', [[acme.id, 'admin']]),
    ann: await person('ann@acme.example', [[acme.id, 'member']]),
    bob: await person('bob@acme.example', [[acme.id, 'member']]),
    globexAdmin: await person('admin@globex.example', [[globex.id, 'admin']]),
    multi: await person('multi@example.com', [[acme.id, 'member'], [globex.id, 'admin']]),
  };
  const forgeResource = `${config.mcpUrl}/forge`;
  const forgeFor = (userId: string, tenantId: string) =>
    issueAccessToken(db, { tenantId, userId, product: 'forge', resource: forgeResource, scopes: ['forge.chat.read', 'forge.chat.write'] });
  const forge = { ann: await forgeFor(users.ann, acme.id), bob: await forgeFor(users.bob, acme.id), globexAdmin: await forgeFor(users.globexAdmin, globex.id) };
  const tenants = { acme: acme.id, globex: globex.id };
  return {
    server, events, published, tenants, users, forge,
    async consoleToken(user, tenant, scopes = ALL_CONSOLE_SCOPES) {
      const issued = await issueAccessToken(db, { tenantId: tenants[tenant], userId: users[user], product: 'console', resource: `${config.apiUrl}/mcp`, scopes });
      return issued.token;
    },
    api: (path, token, init = {}) => fetch(`${server.url}/api/mcp/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } }),
    close: () => server.close(),
  };
}

/** A tiny browser: keeps cookies (path-aware), does not follow redirects, sends same-origin fetch metadata. */
export class Session {
  private readonly jar = new CookieJar();
  constructor(private readonly origin: string) {}
  async request(path: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { 'sec-fetch-site': 'same-origin', ...init.headers };
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers.origin ??= this.origin;
      body = new URLSearchParams(init.form).toString();
    }
    const response = await this.jar.fetch(`${this.origin}${path}`, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body });
    return { status: response.status, location: response.headers.get('location'), headers: response.headers, text: await response.text() };
  }
  /** The Cookie header this browser would send to `path`: a saved copy of its session. */
  cookieFor(path: string): string {
    return this.jar.header(`${this.origin}${path}`);
  }
  static csrfOf(text: string): string {
    return /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
  }
}

/**
 * A browser signed in to the console as `email`. Someone in several organizations is left at the
 * organization choice.
 */
export async function signIn(f: ConsoleFixture, email: string): Promise<Session> {
  const browser = new Session(f.server.url);
  const login = await browser.request('/api/mcp/login');
  await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email, password: PASSWORD } });
  return browser;
}
