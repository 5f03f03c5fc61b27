/**
 * End to end with clients nobody here wrote: the MCP SDK's Client and its OAuth client provider
 * discover the server (401 → Protected Resource Metadata → authorization server metadata),
 * register dynamically, and go through sign-in and consent over HTTP; the person unticks some
 * scopes. Then tools/list shows only the consented tools, and the client creates a conversation,
 * reads it as a resource and gets the summarize prompt.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auditOf, DEMO_PASSWORD, mcpTest } from '../../helpers/mcp.js';
import { BrowserDrivenProvider } from '../../helpers/sdk_oauth.js';

mcpTest('the MCP SDK client with its OAuth provider: discovery, registration, sign-in, consent, then only the consented tools work', async (t, server) => {
  const url = new URL(`${server.mcpUrl}/forge`);
  const provider = new BrowserDrivenProvider(server, { email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', allow: () => ['forge.chat.read', 'forge.chat.write'], clientName: 'SDK end-to-end client' });

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
