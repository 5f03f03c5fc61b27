/**
 * A sign-in page asked while the database does not answer is our failure, not the person's: it is
 * answered 503 `unavailable` (docs/errors.md) and logged with its request id, as the console's pages
 * and the MCP servers answer it, not "this sign-in request is unknown or has expired" (404), which
 * sends the person away and leaves the operator nothing in the log.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { registerClient, startAuthorization } from '../../helpers/oauth.js';
import { startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`the sign-in page answers 503 and logs the failure when the database does not answer [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    const { db } = server.portico.context;
    const acquire = db.client.acquireConnection.bind(db.client);
    try {
      const client = await registerClient(server.url);
      const auth = await startAuthorization(server.url, { clientId: client.client_id, resource: server.forge, scopes: ['forge.chat.read'] });
      t.regex(auth.pageUrl, /\/oauth\/interaction\//);
      db.client.acquireConnection = () => Promise.reject(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'));
      const page = await auth.jar.fetch(auth.pageUrl, { headers: { 'x-request-id': 'sign-in-db-down' } });
      const html = await page.text();
      db.client.acquireConnection = acquire;
      t.is(page.status, 503, html.slice(0, 300));
      t.regex(html, /Error code <code>unavailable<\/code>|unavailable/);
      const lines = server.logs.map((line) => JSON.parse(line) as Record<string, any>);
      t.truthy(lines.find((line) => line.level === 'error' && line.request_id === 'sign-in-db-down'), 'the failure is logged with its request id');
      // Once the database answers again, the same sign-in goes on.
      t.is((await auth.jar.fetch(auth.pageUrl)).status, 200);
    } finally {
      db.client.acquireConnection = acquire;
      await server.close();
    }
  });
}
