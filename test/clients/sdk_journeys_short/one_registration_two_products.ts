/**
 * One client registration, several product servers: an MCP client keeps its registration per
 * authorization server (the SDK stamps it with the issuer and reuses it for every server that names
 * that issuer), and the SDK registers with the `scope` of the first server it met (SEP-835: the
 * 401's scope, else the resource metadata's scopes_supported). Connecting a second product with
 * that same client_id must reach the consent page, not end in `invalid_scope` because the second
 * product's scopes are not in the first one's registration.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import { DEMO_PASSWORD, mcpTest, type McpTestServer } from '../../helpers/mcp.js';
import { BrowserDrivenProvider } from '../../helpers/sdk_oauth.js';

/** A client's provider for one server whose registration is shared by every server of the same authorization server. */
class SharedRegistrationProvider extends BrowserDrivenProvider {
  constructor(server: McpTestServer, private readonly registrations: { client?: OAuthClientInformationMixed }) {
    super(server, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', allow: (requested) => requested, clientName: 'One registration' });
  }

  override clientInformation() {
    return this.registrations.client;
  }

  override saveClientInformation(information: OAuthClientInformationMixed) {
    this.registrations.client = information;
  }
}

/** A fetch that keeps what the client sent to the registration endpoint. */
function recordingRegistrations(bodies: Array<Record<string, unknown>>): typeof fetch {
  return async (input, init) => {
    if (String(input instanceof Request ? input.url : input).endsWith('/oauth/register') && typeof init?.body === 'string') bodies.push(JSON.parse(init.body));
    return fetch(input, init);
  };
}

async function connectWithAuthorization(server: McpTestServer, provider: BrowserDrivenProvider, product: string, recording: typeof fetch): Promise<Client> {
  const url = new URL(`${server.mcpUrl}/${product}`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: recording });
  await new Client({ name: 'one-registration', version: '1.0.0' }).connect(first).then(() => {
    throw new Error('expected the first connection to need authorization');
  }, (error: unknown) => {
    if (!(error instanceof UnauthorizedError)) throw error;
  });
  await first.finishAuth(provider.code!);
  const client = new Client({ name: 'one-registration', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return client;
}

mcpTest('a client registered while connecting one product connects another product with the same registration', async (t, server) => {
  const registrations: { client?: OAuthClientInformationMixed } = {};
  const registrationBodies: Array<Record<string, unknown>> = [];
  const recording = recordingRegistrations(registrationBodies);
  const forge = new SharedRegistrationProvider(server, registrations);
  const forgeClient = await connectWithAuthorization(server, forge, 'forge', recording);
  await forgeClient.close();
  const clientId = registrations.client?.client_id;
  t.truthy(clientId);
  t.is(registrationBodies.length, 1);
  t.true(String(registrationBodies[0].scope ?? '').split(' ').includes('forge.chat.read'), 'the SDK registered with the first server\'s scopes');

  const aegis = new SharedRegistrationProvider(server, registrations);
  const aegisClient: Client | Error = await connectWithAuthorization(server, aegis, 'aegis', recording).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  const refusal = aegisClient instanceof Error ? (/This request cannot continue/.test(aegisClient.message) ? 'the authorization ended on an error page' : aegisClient.message) : '';
  t.false(aegisClient instanceof Error, `connecting aegis with the same registration: ${refusal}`);
  if (aegisClient instanceof Error) return;
  t.is(registrations.client?.client_id, clientId, 'the same registration served both products');
  t.is(registrationBodies.length, 1, 'the client did not register again');
  t.true(aegis.tokens()?.scope?.split(' ').includes('aegis.scans.read'));
  const tools = await aegisClient.listTools();
  t.true(tools.tools.some((tool) => tool.name === 'aegis.list_scans'));
  await aegisClient.close();
});
