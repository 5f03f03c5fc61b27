/**
 * The authorization server as `npm start` mounts it (defaultMounts: the real product catalog,
 * the MCP host and the console beside it): discovery advertises exactly the live catalog's scopes,
 * and the real flow yields a token for one real product server only.
 */
import test from 'ava';
import { addMembership, createTenant, createUser } from '../../../db/accounts.js';
import { authenticateBearer } from '../../../db/grant_store.js';
import { PRODUCTS } from '../../../mcp/products/index.js';
import { buildCatalog } from '../../../shared/catalog.js';
import { CONSOLE_SCOPES } from '../../../shared/console_scopes.js';
import { isAppError } from '../../../shared/errors.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeWithPassword, startAuthorization, registerClient } from '../../helpers/oauth.js';
import { startTestServer } from '../../helpers/server.js';

for (const kind of databasesUnderTest()) {
  test(`with the default mounts, discovery and tokens follow the real catalog [${kind}]`, async (t) => {
    const server = await startTestServer(kind);
    try {
      const { db } = server.portico.context;
      const tenant = await createTenant(db, { slug: 'acme', name: 'Acme' });
      const user = await createUser(db, { email: 'ops@acme.example', password: 'a long password' });
      await addMembership(db, { userId: user.id, tenantId: tenant.id, role: 'admin' });

      const catalog = buildCatalog(PRODUCTS);
      const live = PRODUCTS.filter((p) => p.status === 'live');
      t.true(live.length >= 2, 'at least two live products to compare');
      const discovery = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as { scopes_supported: string[] };
      t.deepEqual(
        [...discovery.scopes_supported].sort(),
        ['openid', 'offline_access', 'email', ...catalog.scopes.map((s) => s.scope), ...Object.keys(CONSOLE_SCOPES)].sort(),
      );

      const [first, second] = live;
      const resource = `${server.url}/mcp/${first.id}`;
      const tokens = await authorizeWithPassword(server.url, { email: 'ops@acme.example', password: 'a long password', tenant: 'acme', resource, scopes: catalog.scopesOf(first.id) });
      const principal = await authenticateBearer(db, tokens.accessToken, resource);
      t.deepEqual([...principal.scopes].sort(), catalog.scopesOf(first.id).sort());
      const error = await authenticateBearer(db, tokens.accessToken, `${server.url}/mcp/${second.id}`).catch((e: unknown) => e);
      t.true(isAppError(error) && error.code === 'invalid_token');

      for (const product of PRODUCTS.filter((p) => p.status !== 'live')) {
        const { client_id: clientId } = await registerClient(server.url);
        const attempt = await startAuthorization(server.url, { clientId, resource: `${server.url}/mcp/${product.id}`, scopes: Object.keys(product.scopes) });
        // A roadmap server may be connected before it ships (it lists no tools until then) ...
        t.regex(attempt.response.headers.get('location') ?? '', /^\/oauth\/interaction\//, `${product.id} can be authorized before it ships`);
        // ... but discovery advertises live products' scopes only.
        t.false(discovery.scopes_supported.some((scope) => scope.startsWith(`${product.id}.`)), `${product.id} scopes are not advertised`);
      }
    } finally {
      await server.close();
    }
  });
}
