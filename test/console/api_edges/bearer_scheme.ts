/**
 * The console API reads `Authorization` as the MCP servers do (shared/http.ts bearerToken, which both use): the scheme
 * name is case-insensitive (RFC 9110 §11.1) and may be followed by more than one space. A client
 * library that sends `bearer <token>` worked with every MCP server and got 401 from the console API.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { startConsole } from '../setup.js';

for (const kind of databasesUnderTest()) {
  test(`the console API accepts the Bearer scheme in any case, as the MCP servers do, and still refuses other schemes [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const token = await f.consoleToken('acmeAdmin', 'acme');
      for (const authorization of [`Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`, `Bearer  ${token}`]) {
        const response = await fetch(`${f.server.url}/api/mcp/v1/connections`, { headers: { authorization } });
        t.is(response.status, 200, authorization.replace(token, '<token>'));
      }
      for (const authorization of [`Basic ${token}`, `Bearer`, `Bearer ${token} extra`, token]) {
        const response = await fetch(`${f.server.url}/api/mcp/v1/connections`, { headers: { authorization } });
        t.is(response.status, 401, authorization.replace(token, '<token>'));
      }
    } finally {
      await f.close();
    }
  });
}
