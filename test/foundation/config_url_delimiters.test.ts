/**
 * A public URL ending in a bare `?` or `#` carries an (empty) query or fragment: WHATWG URL gives
 * it an empty `search`/`hash`, but keeps the delimiter in `href`, so the issuer, the resource URLs
 * and the console's address would end in it. It is refused like any query or fragment, naming the
 * variable that holds it, not the one derived from it.
 */
import test from 'ava';
import { ConfigError, loadConfig } from '../../shared/config.js';

const cases: Array<[string, string]> = [
  ['PUBLIC_AUTH_URL', 'https://portico.example/?'],
  ['PUBLIC_AUTH_URL', 'https://portico.example#'],
  ['PUBLIC_MCP_URL', 'https://portico.example/mcp?'],
  ['PUBLIC_API_URL', 'https://portico.example/api#'],
];

for (const [variable, value] of cases) {
  test(`${variable}=${value} is refused, naming ${variable}`, (t) => {
    const env = { PUBLIC_AUTH_URL: 'https://portico.example', PUBLIC_MCP_URL: 'https://portico.example/mcp', PUBLIC_API_URL: 'https://portico.example/api', [variable]: value };
    const error = t.throws(() => loadConfig(env), { instanceOf: ConfigError });
    t.is(error?.variable, variable, error?.message);
    t.regex(error?.message ?? '', /must not carry a query, fragment or credentials/);
  });
}

test('the same URLs without the delimiter are accepted as they were', (t) => {
  const config = loadConfig({ PUBLIC_AUTH_URL: 'https://portico.example/', PUBLIC_MCP_URL: 'https://portico.example/mcp/', PUBLIC_API_URL: 'https://portico.example/api' });
  t.deepEqual([config.authUrl, config.mcpUrl, config.apiUrl], ['https://portico.example', 'https://portico.example/mcp', 'https://portico.example/api']);
});
