/**
 * End to end with clients nobody here wrote: the MCP SDK's Client and its OAuth client provider
 * discover the server (401 → Protected Resource Metadata → authorization server metadata),
 * register dynamically, and go through sign-in and consent over HTTP; the person unticks some
 * scopes. Then tools/list shows only the consented tools, and the client creates a conversation,
 * reads it as a resource and gets the summarize prompt.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { auditOf, DEMO_PASSWORD, mcpTest, type McpTestServer } from '../helpers/mcp.js';
import { consent, CookieJar, follow, parseForm, postForm } from '../helpers/oauth.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

/** An OAuth client provider as an MCP client would implement it; "the browser" is driven over HTTP. */
class HttpDrivenProvider implements OAuthClientProvider {
  private client?: OAuthClientInformationMixed;
  private tokenSet?: OAuthTokens;
  private verifier = '';
  code?: string;
  requestedScopes: string[] = [];

  constructor(private readonly server: McpTestServer, private readonly person: { email: string; password: string; tenant: string; allow: string[] }) {}

  get redirectUrl() {
    return REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'SDK end-to-end client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }

  tokens() {
    return this.tokenSet;
  }

  saveTokens(tokens: OAuthTokens) {
    this.tokenSet = tokens;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  /** The person's browser: sign in, choose the organization, untick scopes, allow; keep the code. */
  async redirectToAuthorization(url: URL) {
    const base = this.server.config.authUrl;
    this.requestedScopes = (url.searchParams.get('scope') ?? '').split(' ');
    const jar = new CookieJar();
    let page = await follow(base, jar, await jar.fetch(url.href));
    if (page.html && /name="password"/.test(page.html)) {
      const form = parseForm(page.html);
      page = await follow(base, jar, await postForm(base, jar, form.action, [['csrf', form.csrf], ['email', this.person.email], ['password', this.person.password]]));
    }
    if (!page.html) throw new Error(`expected the consent page, got ${page.response.status} ${page.url}`);
    page = await consent(base, jar, page.html, { tenant: this.person.tenant, allow: this.person.allow });
    const redirect = new URL(page.url);
    if (redirect.origin + redirect.pathname !== REDIRECT) throw new Error(`unexpected redirect ${page.url}`);
    this.code = redirect.searchParams.get('code') ?? undefined;
  }
}

mcpTest('the MCP SDK client with its OAuth provider: discovery, registration, sign-in, consent, then only the consented tools work', async (t, server) => {
  const url = new URL(`${server.mcpUrl}/forge`);
  const provider = new HttpDrivenProvider(server, { email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', allow: ['forge.chat.read', 'forge.chat.write'] });

  // First attempt: 401 → discovery → registration → the authorization request the person completes.
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await t.throwsAsync(new Client({ name: 'e2e', version: '1.0.0' }).connect(first), { instanceOf: UnauthorizedError });
  t.truthy(provider.code, 'the person allowed and the client got a code');
  t.true(provider.requestedScopes.includes('forge.documents.write'), 'the client asked for the scopes the 401 named');
  await first.finishAuth(provider.code!);
  t.truthy(provider.tokens()?.access_token);

  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    t.deepEqual(tools.tools.map((tool) => tool.name).sort(), [
      'forge.add_message', 'forge.create_conversation', 'forge.delete_conversation', 'forge.get_conversation', 'forge.list_conversations',
    ]);

    const created = await client.callTool({ name: 'forge.create_conversation', arguments: { title: 'Launch retro', first_message: 'What went well on 2026-12-01?' } });
    t.falsy(created.isError, JSON.stringify(created));
    const conversation = created.structuredContent as { id: string; uri: string; title: string };
    t.is(conversation.uri, `portico://forge/conversations/${conversation.id}`);

    const resource = await client.readResource({ uri: conversation.uri });
    const body = JSON.parse(String((resource.contents[0] as { text: string }).text));
    t.is(body.id, conversation.id);
    t.is(body.title, 'Launch retro');
    t.deepEqual(body.messages.map((m: any) => m.content), ['What went well on 2026-12-01?']);

    const prompt = await client.getPrompt({ name: 'forge.summarize_conversation', arguments: { conversation_id: conversation.id } });
    t.regex((prompt.messages[0].content as { text: string }).text, /Summarize the conversation "Launch retro"/);
    const embedded = prompt.messages[1].content as { type: string; resource: { uri: string; text: string } };
    t.is(embedded.type, 'resource');
    t.is(embedded.resource.uri, conversation.uri);
    t.regex(embedded.resource.text, /What went well on 2026-12-01\?/);

    // the unticked scopes were not granted: a documents tool is refused even by name
    const refused = await client.callTool({ name: 'forge.upload_document', arguments: { title: 'x', text: 'y' } }).catch((e) => e);
    t.truthy(refused instanceof Error);

    const records = await auditOf(server, 'acme', { user_id: server.users['member@acme.example'] });
    const calls = records.filter((r) => r.product === 'forge' && ['tool', 'resource', 'prompt'].includes(r.kind)).map((r) => [r.kind, r.name, r.outcome]);
    t.deepEqual(calls.slice(0, 3), [
      ['tool', 'forge.create_conversation', 'ok'],
      ['resource', 'forge.conversations', 'ok'],
      ['prompt', 'forge.summarize_conversation', 'ok'],
    ]);
    // The SDK client answers a 403 insufficient_scope with one step-up attempt and a retry: each try is refused and audited.
    t.true(calls.length >= 4);
    t.true(calls.slice(3).every(([kind, name, outcome]) => kind === 'tool' && name === 'forge.upload_document' && outcome === 'insufficient_scope'), JSON.stringify(calls));
  } finally {
    await client.close();
  }
});
