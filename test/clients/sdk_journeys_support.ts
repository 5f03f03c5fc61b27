/**
 * An MCP client over time, as a chat assistant runs one: the SDK's Client and
 * StreamableHTTPClientTransport with an OAuth provider whose "browser" is a person on Portico's
 * pages (test/helpers/sdk_oauth.ts). Like real clients, it forgets tokens the authorization server
 * called invalid (invalidateCredentials), and it counts each time the person was sent to sign in.
 */
import type { OAuthClientInformationMixed } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, type StreamableHTTPReconnectionOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { hashTokenId } from '../../db/grant_store.js';
import { DEMO_PASSWORD, type McpTestServer } from '../helpers/mcp.js';
import { BrowserDrivenProvider } from '../helpers/sdk_oauth.js';

export class AssistantProvider extends BrowserDrivenProvider {
  readonly invalidated: string[] = [];
  private forgotten = false;

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    this.invalidated.push(scope);
    if (scope === 'all' || scope === 'tokens') this.forgotten = true;
    if (scope === 'all' || scope === 'client') this.saveClientInformation(undefined as unknown as OAuthClientInformationMixed);
  }

  override tokens() {
    return this.forgotten ? undefined : super.tokens();
  }

  override saveTokens(tokens: Parameters<BrowserDrivenProvider['saveTokens']>[0]) {
    this.forgotten = false;
    super.saveTokens(tokens);
  }
}

export function assistant(server: McpTestServer): AssistantProvider {
  return new AssistantProvider(server, { email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', allow: (requested) => requested, clientName: 'Chat assistant' });
}

export interface ConnectOptions {
  /** The client's capabilities (elicitation, for a client that can ask the person). */
  capabilities?: Record<string, unknown>;
  /** Runs after the person has allowed and before the client connects with the new tokens. */
  beforeConnect?: () => Promise<unknown>;
  /** The transport's fetch, for a test that watches or holds the client's requests. */
  fetch?: typeof fetch;
  /** How the transport reopens a closed GET stream (the SDK's default: twice, after 1 s then 1.5 s). */
  reconnectionOptions?: StreamableHTTPReconnectionOptions;
}

/** Authorizes (the person signs in and allows) and returns a connected client with its transport. */
export async function signedIn(server: McpTestServer, provider: AssistantProvider, product: string, options: ConnectOptions = {}) {
  const url = new URL(`${server.mcpUrl}/${product}`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const refused = await new Client({ name: 'assistant', version: '1.0.0' }).connect(first).catch((error: unknown) => error);
  if (!(refused instanceof UnauthorizedError)) throw new Error(`expected the first connection to need authorization, got ${String(refused)}`);
  await first.finishAuth(provider.code!);
  await options.beforeConnect?.();
  return connectAgain(server, provider, product, options);
}

export async function connectAgain(server: McpTestServer, provider: AssistantProvider, product: string, options: ConnectOptions = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.mcpUrl}/${product}`), { authProvider: provider, fetch: options.fetch, reconnectionOptions: options.reconnectionOptions });
  const client = new Client({ name: 'assistant', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  const errors: unknown[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, transport, errors };
}

/** Makes the provider's current access token expire `inMs` from now, as an hour passing would. */
export async function expireAccessToken(server: McpTestServer, token: string, inMs: number): Promise<number> {
  const id = hashTokenId(token);
  const row = await server.db('oidc_payloads').where({ model: 'AccessToken', id }).first();
  const payload = JSON.parse(row.payload);
  const expiresAt = Date.now() + inMs;
  payload.exp = Math.ceil(expiresAt / 1000);
  await server.db('oidc_payloads').where({ model: 'AccessToken', id }).update({ payload: JSON.stringify(payload), expires_at: payload.exp * 1000 });
  return payload.exp * 1000;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
