/**
 * Interoperability with the MCP SDK's client, which most MCP clients are built on: every
 * capability a product server offers (tools, resources, prompts, ping, tools/list_changed) and
 * step-up authorization (403 insufficient_scope → re-authorization with the wider scope → success)
 * driven by the SDK's own auth() through an OAuthClientProvider whose "browser" is our sign-in and
 * consent pages over HTTP.
 */
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { setSurfaceStatus } from '../../db/surfaces.js';
import { databasesUnderTest } from '../helpers/db.js';
import { blinkSurface, connect, DEMO_PASSWORD, mcpTest, startMcpServer, type McpTestServer } from '../helpers/mcp.js';
import { BrowserDrivenProvider } from '../helpers/sdk_oauth.js';

/** The person is member@acme.example; the client keeps held scopes on step-up (SEP-2350). */
function stepUpBrowser(server: McpTestServer, allow: (requested: string[]) => string[], grantTypes: string[]): BrowserDrivenProvider {
  return new BrowserDrivenProvider(server, { email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', allow, grantTypes, keepHeldScopes: true, clientName: 'SDK step-up client' });
}

async function signedInClient(server: McpTestServer, provider: BrowserDrivenProvider, product: string): Promise<Client> {
  const url = new URL(`${server.mcpUrl}/${product}`);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await new Client({ name: 'sdk-interop', version: '1.0.0' }).connect(first).then(() => {
    throw new Error('expected the first connection to need authorization');
  }, (error: unknown) => {
    if (!(error instanceof UnauthorizedError)) throw error;
  });
  await first.finishAuth(provider.code!);
  const client = new Client({ name: 'sdk-interop', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return client;
}

const onlyReads = (requested: string[]) => requested.filter((scope) => scope.endsWith('.read'));

mcpTest('step-up: a read-only connection calling a write tool is challenged, the SDK client re-authorizes with the wider scope and then succeeds', async (t, server) => {
  // A client that does not ask for refresh tokens: SDK 1.32.2 then answers a step-up with a new authorization.
  const provider = stepUpBrowser(server, onlyReads, ['authorization_code']);
  const reader = await signedInClient(server, provider, 'forge');
  t.deepEqual(provider.requests.map((r) => r.resource), [`${server.mcpUrl}/forge`]);
  t.is(provider.tokens()?.scope, 'forge.chat.read forge.content.read forge.documents.read');
  t.deepEqual((await reader.listTools()).tools.map((tool) => tool.name).filter((name) => name.includes('conversation')).sort(), ['forge.get_conversation', 'forge.list_conversations']);

  // The write call: HTTP 403 + WWW-Authenticate error="insufficient_scope", scope="forge.chat.write" → auth() → the person allows.
  provider.allow = (requested) => requested;
  const call = { name: 'forge.create_conversation', arguments: { title: 'Stepped up', first_message: 'now with write access' } };
  await t.throwsAsync(reader.callTool(call), { instanceOf: UnauthorizedError });
  t.is(provider.requests.length, 2);
  t.is(provider.requests[1].scope, 'forge.chat.write', 'the SDK asked for the scope the challenge named');
  t.is(provider.requests[1].resource, `${server.mcpUrl}/forge`);
  await reader.close();

  const transport = new StreamableHTTPClientTransport(new URL(`${server.mcpUrl}/forge`), { authProvider: provider });
  await transport.finishAuth(provider.code!);
  t.deepEqual(provider.tokens()?.scope?.split(' ').sort(), ['forge.chat.read', 'forge.chat.write', 'forge.content.read', 'forge.documents.read']);

  // The new grant is a new connection: the client starts a new session with it (a session belongs to one connection).
  const writer = new Client({ name: 'sdk-interop', version: '1.0.0' });
  await writer.connect(transport);
  try {
    const created = await writer.callTool(call);
    t.falsy(created.isError, JSON.stringify(created));
    const conversation = created.structuredContent as { id: string; title: string };
    t.is(conversation.title, 'Stepped up');
    const listed = await writer.callTool({ name: 'forge.list_conversations', arguments: {} });
    t.true(JSON.stringify(listed.structuredContent).includes(conversation.id), 'the scopes held before the step-up still work');
  } finally {
    await writer.close();
  }
});

// SDK 1.32.2 answers a step-up with a refresh when it holds a refresh token (typescript-sdk #2255): the
// refreshed token has the old scopes, the retry gets the same 403 and the SDK gives up with
// "Server returned 403 after trying upscoping". Kept as a known failure: when the SDK is fixed this test
// passes, ava reports that, and `.failing` must be removed.
for (const kind of databasesUnderTest()) {
  test.failing(`step-up with a refresh token held: SDK 1.32.2 refreshes instead of re-authorizing (typescript-sdk #2255) [${kind}]`, async (t) => {
    const server = await startMcpServer(kind);
    try {
      const provider = stepUpBrowser(server, onlyReads, ['authorization_code', 'refresh_token']);
      const reader = await signedInClient(server, provider, 'forge');
      t.truthy(provider.tokens()?.refresh_token);
      provider.allow = (requested) => requested;
      const outcome = await reader.callTool({ name: 'forge.create_conversation', arguments: { title: 'x' } }).catch((error: unknown) => error);
      await reader.close();
      t.true(outcome instanceof UnauthorizedError, `expected a new authorization, got ${String(outcome)}`);
      t.is(provider.requests.at(-1)?.scope, 'forge.chat.write');
    } finally {
      await server.close();
    }
  });
}

mcpTest('the SDK client over every capability of a product server: tools, resources, prompts, ping', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write', 'forge.documents.read', 'forge.documents.write'] });
  try {
    t.deepEqual(client.getServerCapabilities(), { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } });
    t.is(client.getServerVersion()?.name, 'portico-forge');
    t.regex(client.getInstructions() ?? '', /confirmation_required/);
    await client.ping();

    const tools = await client.listTools();
    t.deepEqual(tools.tools.map((tool) => tool.name).sort(), [
      'forge.add_message', 'forge.analyze_document', 'forge.create_conversation', 'forge.delete_conversation', 'forge.get_conversation', 'forge.list_conversations', 'forge.upload_document',
    ]);
    const upload = tools.tools.find((tool) => tool.name === 'forge.upload_document')!;
    t.is(upload.inputSchema.type, 'object');
    t.deepEqual(upload.annotations, { title: upload.annotations?.title, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });

    const uploaded = await client.callTool({ name: 'forge.upload_document', arguments: { title: 'Runbook', text: '# Restart\nCall ops@example.com on 2026-12-01.' } });
    const document = uploaded.structuredContent as { id: string; uri: string };
    t.is(document.uri, `portico://forge/documents/${document.id}`);
    const analysed = await client.callTool({ name: 'forge.analyze_document', arguments: { document_id: document.id } });
    t.true(JSON.stringify(analysed.structuredContent).includes('ops@example.com'));

    const templates = await client.listResourceTemplates();
    t.deepEqual(templates.resourceTemplates.map((r) => r.uriTemplate).sort(), ['portico://forge/conversations/{id}', 'portico://forge/documents/{id}']);
    t.deepEqual((await client.listResources()).resources, []);
    const read = await client.readResource({ uri: document.uri });
    t.is(read.contents[0].uri, document.uri);
    t.regex(String((read.contents[0] as { text: string }).text), /Call ops@example\.com/);

    const prompts = await client.listPrompts();
    t.deepEqual(prompts.prompts.map((p) => p.name), ['forge.summarize_conversation']);
    const created = await client.callTool({ name: 'forge.create_conversation', arguments: { title: 'Interop', first_message: 'hello' } });
    const prompt = await client.getPrompt({ name: 'forge.summarize_conversation', arguments: { conversation_id: (created.structuredContent as { id: string }).id } });
    t.true(prompt.messages.length >= 1);
  } finally {
    await close();
  }
});

mcpTest('tools/list_changed reaches a connected SDK client when its product’s surface changes', async (t, server) => {
  await setSurfaceStatus(server.db, 'midas', 'live');
  await server.events.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
  const { client, close } = await connect(server, { product: 'midas', tenant: 'acme', scopes: ['midas.api.read'] });
  try {
    t.is((await client.listTools()).tools.length, 3);
    let heard: string | undefined;
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => {
      heard = n.method;
    });
    await setSurfaceStatus(server.db, 'midas', 'roadmap');
    // The SDK client opens its GET stream just after initialization and a notification sent before it
    // is open has nowhere to go; each move of the surface notifies again, so repeat until heard.
    for (let attempt = 0; attempt < 100 && !heard; attempt++) {
      await blinkSurface(server, 'midas', 'roadmap');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.is(heard, 'notifications/tools/list_changed');
  } finally {
    await close();
  }
});
