/**
 * The console's JSON API is "an OAuth-protected resource ... get a token like any client"
 * (docs/console.md). RFC 6750 §2.1 sends the token with the `Bearer` authentication scheme, whose
 * name is case-insensitive (RFC 9110 §11.1, "auth-scheme"), and the MCP servers take it so
 * (mcp/host.ts bearerOf). A client writing `bearer` or `BEARER` must be served by the console API
 * too, not told that no token was sent.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { startConsole } from './setup.js';

for (const kind of databasesUnderTest()) {
  test(`the console API takes the Bearer scheme in any case, as the MCP servers do [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const token = await f.consoleToken('acmeAdmin', 'acme');
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        const response = await fetch(`${f.server.url}/api/mcp/v1/connections`, { headers: { authorization: `${scheme} ${token}` } });
        t.is(response.status, 200, scheme);
        t.true(Array.isArray(((await response.json()) as { connections: unknown[] }).connections), scheme);
      }
      // Anything else is still no token at all.
      for (const header of [`Basic ${token}`, token, `Bearer`, `Bearer ${token} extra`]) {
        const response = await fetch(`${f.server.url}/api/mcp/v1/connections`, { headers: { authorization: header } });
        t.is(response.status, 401, header.replace(token, '<token>'));
        t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="/);
      }
    } finally {
      await f.close();
    }
  });
}
