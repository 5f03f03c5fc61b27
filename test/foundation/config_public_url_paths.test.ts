/**
 * Portico routes by path whatever the host (one Koa app serves every public URL), so two parts
 * whose paths overlap would shadow each other: the MCP servers (mounted first) would answer the
 * console's pages at {api_url}/mcp, or the paths the authorization server and the operational
 * endpoints own. Such a configuration is refused at start, naming the variables. Public URLs that
 * mix http and https start, with a warning naming them.
 */
import test from 'ava';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { startTestServer } from '../helpers/server.js';

const refused: Array<[env: Record<string, string>, variable: string, names: RegExp]> = [
  // The console of an API URL at the root of its origin is /mcp, the default MCP path.
  [{ PUBLIC_API_URL: 'https://api.portico.example' }, 'PUBLIC_MCP_URL', /PUBLIC_API_URL/],
  [{ PUBLIC_MCP_URL: 'http://localhost:8080/api/mcp' }, 'PUBLIC_MCP_URL', /PUBLIC_API_URL/],
  [{ PUBLIC_MCP_URL: 'http://localhost:8080/api/mcp/connections' }, 'PUBLIC_MCP_URL', /PUBLIC_API_URL/],
  [{ PUBLIC_MCP_URL: 'https://mcp.portico.example/console/mcp/servers', PUBLIC_API_URL: 'https://portico.example/console' }, 'PUBLIC_MCP_URL', /PUBLIC_API_URL/],
  [{ PUBLIC_MCP_URL: 'http://localhost:8080/oauth' }, 'PUBLIC_MCP_URL', /\/oauth/],
  [{ PUBLIC_MCP_URL: 'http://localhost:8080/oauth/mcp' }, 'PUBLIC_MCP_URL', /\/oauth/],
  [{ PUBLIC_MCP_URL: 'http://localhost:8080/.well-known/mcp' }, 'PUBLIC_MCP_URL', /\/\.well-known/],
  [{ PUBLIC_MCP_URL: 'http://localhost:8080/metrics' }, 'PUBLIC_MCP_URL', /\/metrics/],
  [{ PUBLIC_API_URL: 'http://localhost:8080/oauth' }, 'PUBLIC_API_URL', /\/oauth/],
  [{ PUBLIC_API_URL: 'https://api.portico.example/.well-known' }, 'PUBLIC_API_URL', /\/\.well-known/],
];

for (const [env, variable, names] of refused) {
  test(`public URLs whose paths overlap are refused at start, naming ${variable}: ${JSON.stringify(env)}`, (t) => {
    const error = t.throws(() => loadConfig(env), { instanceOf: ConfigError });
    t.is(error?.variable, variable);
    t.true(error?.message.startsWith(`${variable}: `), error?.message);
    t.regex(error?.message ?? '', names);
  });
}

test('public URLs on separate paths are accepted, an MCP URL at the root of its origin included', (t) => {
  const accepted: Array<Record<string, string>> = [
    {},
    { PUBLIC_MCP_URL: 'https://mcp.portico.example', PUBLIC_API_URL: 'https://api.portico.example' },
    { PUBLIC_MCP_URL: 'https://portico.example/tools', PUBLIC_API_URL: 'https://portico.example/tools' },
    { PUBLIC_MCP_URL: 'https://portico.example/mcp', PUBLIC_API_URL: 'https://portico.example/mcp' },
    { PUBLIC_MCP_URL: 'https://portico.example/oauthmcp', PUBLIC_API_URL: 'https://portico.example/api/mcp-admin' },
  ];
  for (const env of accepted) t.notThrows(() => loadConfig(env), JSON.stringify(env));
});

test('public URLs that mix http and https start with a warning naming them; one scheme starts without', async (t) => {
  const mixed = await startTestServer('sqlite', { env: { PUBLIC_AUTH_URL: 'https://auth.portico.test', PUBLIC_MCP_URL: 'http://mcp.portico.test/mcp' }, mounts: [] });
  const same = await startTestServer('sqlite', { env: { PUBLIC_AUTH_URL: 'https://auth.portico.test', PUBLIC_MCP_URL: 'https://mcp.portico.test/mcp' }, mounts: [] });
  try {
    const warnings = (logs: string[]) => logs.map((line) => JSON.parse(line)).filter((line) => line.level === 'warn' && /http and https/.test(line.msg));
    const [warning, ...more] = warnings(mixed.logs);
    t.truthy(warning, mixed.logs.join('\n').slice(0, 1000));
    t.is(more.length, 0);
    t.regex(warning.msg, /PUBLIC_MCP_URL/);
    t.regex(warning.msg, /PUBLIC_AUTH_URL/);
    t.deepEqual(warnings(same.logs), []);
  } finally {
    await mixed.close();
    await same.close();
  }
});
