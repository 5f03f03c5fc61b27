/**
 * A client given only the URL of roadmap midas (README, "The product servers": clients may connect
 * already and see no tools) reads the 401 challenge and the protected resource metadata and
 * authorizes with what they say: a product with no scopes sends no empty `scope=""`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEMO_PASSWORD, mcpTest } from '../../helpers/mcp.js';
import { BrowserDrivenProvider } from '../../helpers/sdk_oauth.js';

mcpTest('an SDK client given only the URL of roadmap midas connects and lists no tools', async (t, server) => {
  const challenge = await fetch(`${server.mcpUrl}/midas`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  t.is(challenge.status, 401);
  const header = challenge.headers.get('www-authenticate') ?? '';
  t.notRegex(header, /scope=""/, 'RFC 6750 §3: a scope attribute holds one or more scope tokens');

  const provider = new BrowserDrivenProvider(server, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', allow: () => undefined as unknown as string[] }); // leave ticked what the consent page offers
  const url = new URL(`${server.mcpUrl}/midas`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await t.throwsAsync(new Client({ name: 'r', version: '1' }).connect(first), { instanceOf: UnauthorizedError });
  await first.finishAuth(provider.code!);
  const client = new Client({ name: 'r', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  t.deepEqual(provider.tokens()?.scope?.split(' ').sort(), ['midas.api.read', 'midas.api.write']);
  t.deepEqual((await client.listTools()).tools, []);
  await client.close();
});
