/**
 * A Portico with only the authorization server mounted, a small catalog of test products and
 * three people in two organizations. The products are real catalog declarations (no tools are
 * needed to authorize), so the tests do not depend on the product helpers' work.
 */
import { addMembership, createTenant, createUser, type DbTenantRow, type User } from '../../db/accounts.js';
import { authMount, type AuthMountOptions } from '../../auth/index.js';
import { buildCatalog, defineProduct, type Catalog } from '../../shared/catalog.js';
import { EventBus, type PorticoEvent } from '../../shared/events.js';
import type { DbKind, TestDatabase } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { runAdmin } from '../../scripts/admin.js';
import { authenticateBearer } from '../../db/grant_store.js';
import { isAppError } from '../../shared/errors.js';

export const PASSWORD = 'correct horse battery staple';

const empty = { tools: [], resources: [], prompts: [] };
export const TEST_PRODUCTS = [
  defineProduct({ id: 'forge', title: 'Forge', kind: 'conversations', status: 'live', scopes: { 'forge.chat.read': 'Read your conversations', 'forge.chat.write': 'Write messages in your conversations' }, ...empty }),
  // Connected by administrators only, as the real aegis is.
  defineProduct({ id: 'aegis', title: 'Aegis', kind: 'security', status: 'live', connectableBy: 'admins', scopes: { 'aegis.scans.read': 'Read security scan results' }, ...empty }),
  defineProduct({ id: 'midas', title: 'Midas', kind: 'finance', status: 'roadmap', scopes: { 'midas.ledger.read': 'Read the ledger' }, ...empty }),
];

export interface AuthServer extends TestServer {
  catalog: Catalog;
  events: EventBus;
  published: PorticoEvent[];
  /** Makes a product live or not, as `surface ship` will. */
  live: Set<string>;
  tenants: { acme: DbTenantRow; globex: DbTenantRow };
  users: { alice: User; bob: User; multi: User };
  forge: string;
  aegis: string;
}

export async function startAuthServer(kind: DbKind, options: { database?: TestDatabase; auth?: Partial<AuthMountOptions>; env?: Record<string, string>; seed?: boolean } = {}): Promise<AuthServer> {
  const live = new Set(['forge', 'aegis']);
  const catalog = buildCatalog(TEST_PRODUCTS, (id) => live.has(id));
  const events = new EventBus();
  const published: PorticoEvent[] = [];
  events.on((event) => published.push(event));
  const server = await startTestServer(kind, { database: options.database, env: options.env, mounts: [authMount({ catalog, events, ...options.auth })] });
  const { db } = server.portico.context;
  let tenants: AuthServer['tenants'];
  let users: AuthServer['users'];
  if (options.seed === false) {
    tenants = { acme: (await db('tenants').where({ slug: 'acme' }).first())!, globex: (await db('tenants').where({ slug: 'globex' }).first())! };
    const byEmail = async (email: string) => (await db('users').where({ email }).first('id', 'email', 'display_name', 'created_at', 'last_login_at'))!;
    users = { alice: await byEmail('alice@acme.example'), bob: await byEmail('bob@globex.example'), multi: await byEmail('multi@example.com') };
  } else {
    tenants = { acme: await createTenant(db, { slug: 'acme', name: 'Acme Inc.' }), globex: await createTenant(db, { slug: 'globex', name: 'Globex' }) };
    users = {
      alice: await createUser(db, { email: 'alice@acme.example', password: PASSWORD }),
      bob: await createUser(db, { email: 'bob@globex.example', password: PASSWORD }),
      multi: await createUser(db, { email: 'multi@example.com', password: PASSWORD }),
    };
    await addMembership(db, { userId: users.alice.id, tenantId: tenants.acme.id, role: 'admin' });
    await addMembership(db, { userId: users.bob.id, tenantId: tenants.globex.id, role: 'member' });
    await addMembership(db, { userId: users.multi.id, tenantId: tenants.acme.id, role: 'member' });
    await addMembership(db, { userId: users.multi.id, tenantId: tenants.globex.id, role: 'member' });
  }
  return { ...server, catalog, events, published, live, tenants, users, forge: `${server.url}/mcp/forge`, aegis: `${server.url}/mcp/aegis` };
}

/**
 * A public client as an operator registers it (a `reg_` id, which the admin CLI mints): stored
 * straight in the provider's table, as `npm run admin -- client add` would leave it.
 */
export async function addRegisteredClient(server: TestServer, client: { clientId: string; name: string; redirectUri: string }): Promise<void> {
  await server.portico.context.db('oidc_payloads').insert({
    model: 'Client', id: client.clientId, client_id: client.clientId, created_at: Date.now(),
    payload: JSON.stringify({
      client_id: client.clientId, client_name: client.name, redirect_uris: [client.redirectUri], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    }),
  });
}

/** Counts rows, to prove that a refused request wrote nothing. */
export async function rowCounts(server: TestServer): Promise<Record<string, number>> {
  const { db } = server.portico.context;
  const count = async (table: string, where: Record<string, string> = {}) => Number((await db(table).where(where).count<{ n: number }[]>({ n: '*' }))[0].n);
  return {
    clients: await count('oidc_payloads', { model: 'Client' }),
    grants: await count('oidc_payloads', { model: 'Grant' }),
    accessTokens: await count('oidc_payloads', { model: 'AccessToken' }),
    connections: await count('connections'),
    audit: await count('audit_log'),
  };
}

/** A POST whose body is sent in 8 KiB chunks with no Content-Length (Transfer-Encoding: chunked). */
export function streamedPost(url: string, body: string, headers: Record<string, string>): Promise<Response> {
  const bytes = new TextEncoder().encode(body);
  return fetch(url, {
    method: 'POST',
    headers,
    duplex: 'half',
    body: new ReadableStream({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 8192) controller.enqueue(bytes.subarray(i, i + 8192));
        controller.close();
      },
    }),
  } as RequestInit);
}

/** Runs the operator CLI (`npm run admin -- …`) on the server's database: its exit code and output. */
export async function admin(server: AuthServer, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { DATABASE_URL: server.database.url });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** How forge's resource server refuses an access token now (`code: message`), or undefined if it accepts it. */
export async function refusal(server: AuthServer, token: string): Promise<string | undefined> {
  const error = await authenticateBearer(server.portico.context.db, token, server.forge).then(() => undefined, (e: unknown) => e);
  return isAppError(error) ? `${error.code}: ${error.message}` : undefined;
}
