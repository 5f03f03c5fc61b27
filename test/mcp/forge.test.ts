/** forge's own behaviour over real tables: chat, content, documents, deterministic analysis, elicitation. */
import test from 'ava';
import { analyzeText } from '../../mcp/products/forge/analysis.js';
import { uuidv7 } from '../../db/ids.js';
import { auditOf, connect, mcpTest } from '../helpers/mcp.js';

const ALL = ['forge.chat.read', 'forge.chat.write', 'forge.content.read', 'forge.content.write', 'forge.documents.read', 'forge.documents.write'];

const DOCUMENT = `# Quarterly report

Revenue grew in Q3. Revenue in Europe grew fastest! Was it the pricing change?

Underlined heading
------------------

Contact finance@acme.example or Sales@Acme.Example before 2026-12-01.
The board meets on 3 March 2027 and again on December 5, 2027; see https://acme.example/board?q=1.
`;

test('document analysis is deterministic and finds counts, headings, terms, links, addresses and dates', (t) => {
  const first = analyzeText(DOCUMENT);
  t.deepEqual(analyzeText(DOCUMENT), first);
  t.is(first.words, 36, 'links and addresses are not prose; 2026-12-01 is one word');
  t.is(first.sentences, 7);
  t.is(first.paragraphs, 4);
  t.is(first.reading_time_minutes, 1);
  t.deepEqual(first.headings, [{ level: 1, text: 'Quarterly report' }, { level: 2, text: 'Underlined heading' }]);
  // more than ten distinct terms: only repeated ones count, most frequent first, ties alphabetical, stop words never
  t.deepEqual(first.key_terms, [{ term: 'grew', count: 2 }, { term: 'revenue', count: 2 }]);
  t.deepEqual(first.links, ['https://acme.example/board?q=1']);
  t.deepEqual(first.email_addresses, ['finance@acme.example', 'sales@acme.example']);
  t.deepEqual(first.dates, ['2026-12-01', '3 March 2027', 'December 5, 2027']);
  t.deepEqual([first.headings_total, first.links_total, first.email_addresses_total, first.dates_total], [2, 1, 2, 3]);
  t.false(first.headings_truncated || first.links_truncated || first.email_addresses_truncated || first.dates_truncated);
  t.deepEqual(analyzeText(''), {
    characters: 0, words: 0, sentences: 0, paragraphs: 0, reading_time_minutes: 0, headings: [], headings_total: 0, headings_truncated: false, key_terms: [],
    links: [], links_total: 0, links_truncated: false, email_addresses: [], email_addresses_total: 0, email_addresses_truncated: false, dates: [], dates_total: 0, dates_truncated: false,
  });
});

test('document analysis lists only dates that are on the calendar, day and month in figures read either way round', (t) => {
  const text = [
    'Real: 2024-02-29, 29.02.2024, 3/12/2026, 12/31/2026, 31 December 2026, Sept 30th, 2026.',
    'Not: 2026-02-29, 2026-13-01, 2026-04-31, 2026-00-10, 31.04.2026, 13/13/2026, 0/5/2026, 30 February 2026, Nov 31, 2026, 1/1/0050.',
  ].join('\n');
  const analysis = analyzeText(text);
  t.deepEqual(analysis.dates, ['2024-02-29', '29.02.2024', '3/12/2026', '12/31/2026', '31 December 2026', 'Sept 30th, 2026']);
  t.is(analysis.dates_total, 6);
});

test('document analysis lists the first 50 headings, links, addresses and dates, and says how many there are', (t) => {
  const lines = Array.from({ length: 60 }, (_, i) => `# Part ${i}\n\nSee https://acme.example/${i} or mail p${i}@acme.example by 2026-01-${String((i % 28) + 1).padStart(2, '0')}.`);
  const analysis = analyzeText(lines.join('\n\n'));
  t.deepEqual(analysis.headings.map((h) => h.text), Array.from({ length: 50 }, (_, i) => `Part ${i}`), 'the first 50, in order');
  t.deepEqual([analysis.headings_total, analysis.links_total, analysis.email_addresses_total, analysis.dates_total], [60, 60, 60, 28]);
  t.deepEqual([analysis.headings_truncated, analysis.links_truncated, analysis.email_addresses_truncated, analysis.dates_truncated], [true, true, true, false]);
  t.is(analysis.links.length, 50);
  t.is(analysis.dates.length, 28);
});

mcpTest('chat: create with a first message, add messages, list newest first with a cursor, read it back', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', user: 'member@acme.example', scopes: ALL });
  try {
    const created = (await client.callTool({ name: 'forge.create_conversation', arguments: { title: '  Pricing  ', first_message: 'Draft the FAQ' } })).structuredContent as any;
    t.is(created.title, 'Pricing');
    t.is(created.message_count, 1);
    t.is(created.created_by, server.users['member@acme.example']);
    t.is(created.first_message.role, 'user');
    const added = (await client.callTool({ name: 'forge.add_message', arguments: { conversation_id: created.id.toUpperCase(), content: 'Here is a draft.', role: 'assistant' } })).structuredContent as any;
    t.is(added.conversation_id, created.id);
    t.is(added.author_id, null);

    const page1 = (await client.callTool({ name: 'forge.list_conversations', arguments: { limit: 1 } })).structuredContent as any;
    t.is(page1.conversations.length, 1);
    t.is(page1.conversations[0].id, created.id, 'newest created first');
    t.is(page1.conversations[0].message_count, 2);
    t.truthy(page1.next_cursor);
    const page2 = (await client.callTool({ name: 'forge.list_conversations', arguments: { limit: 100, cursor: page1.next_cursor } })).structuredContent as any;
    t.false(page2.conversations.some((c: any) => c.id === created.id));
    t.is(page2.next_cursor, null);
    const bad = await client.callTool({ name: 'forge.list_conversations', arguments: { cursor: 'garbage' } }).catch((e) => e);
    t.is(bad.data?.code, 'invalid_arguments');
    t.is(bad.data?.field, 'cursor');

    const full = (await client.callTool({ name: 'forge.get_conversation', arguments: { conversation_id: created.id } })).structuredContent as any;
    t.deepEqual(full.messages.map((m: any) => [m.role, m.content]), [['user', 'Draft the FAQ'], ['assistant', 'Here is a draft.']]);
    t.false(full.messages_truncated);
    const missing = await client.callTool({ name: 'forge.get_conversation', arguments: { conversation_id: '00000000-0000-4000-8000-000000000000' } });
    t.true(missing.isError);
    t.is((missing.structuredContent as any).code, 'not_found');
    const garbage = await client.callTool({ name: 'forge.get_conversation', arguments: { conversation_id: 'not-a-uuid' } });
    t.is((garbage.structuredContent as any).code, 'not_found');
  } finally {
    await close();
  }
});

mcpTest('paging conversations neither skips nor repeats one that gets a message meanwhile: newest created first', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ALL });
  const list = async (args: Record<string, unknown>) => (await client.callTool({ name: 'forge.list_conversations', arguments: args })).structuredContent as any;
  try {
    const created: string[] = [];
    for (const title of ['Oldest', 'Middle', 'Newest']) {
      created.push(((await client.callTool({ name: 'forge.create_conversation', arguments: { title } })).structuredContent as any).id);
      await new Promise((resolve) => setTimeout(resolve, 5)); // distinct creation times
    }
    const first = await list({ limit: 1 });
    t.deepEqual(first.conversations.map((c: any) => c.id), [created[2]], 'the newest created first');
    // The oldest, not yet seen, gets a message: it is the most recently active now.
    await client.callTool({ name: 'forge.add_message', arguments: { conversation_id: created[0], content: 'Still here' } });
    const seen: string[] = [first.conversations[0].id];
    for (let cursor = first.next_cursor; cursor;) {
      const page = await list({ limit: 1, cursor });
      seen.push(...page.conversations.map((c: any) => c.id));
      cursor = page.next_cursor;
    }
    t.is(new Set(seen).size, seen.length, 'no conversation twice');
    t.deepEqual(seen.filter((id) => created.includes(id)), [created[2], created[1], created[0]], 'each once, newest created first');
    const all = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).count({ n: '*' }).first();
    t.is(seen.length, Number(all?.n));
  } finally {
    await close();
  }
});

mcpTest('messages written in one millisecond read back in the order they were written', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ALL });
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })).structuredContent as any;
  const realNow = Date.now;
  try {
    // A quick client, or a coarse clock: a question and its answers stamped with the same created_at.
    const frozen = realNow();
    Date.now = () => frozen;
    const conversation = await call('forge.create_conversation', { title: 'Same millisecond', first_message: 'message 0' });
    const written = ['message 0'];
    for (let i = 1; i < 12; i += 1) {
      await call('forge.add_message', { conversation_id: conversation.id, content: `message ${i}`, role: i % 2 ? 'assistant' : 'user' });
      written.push(`message ${i}`);
    }
    Date.now = realNow;
    const full = await call('forge.get_conversation', { conversation_id: conversation.id });
    t.deepEqual(full.messages.map((m: any) => m.content), written, 'oldest first: in the order written');
    t.true(new Set(full.messages.map((m: any) => m.created_at)).size === 1, 'all share one created_at');
  } finally {
    Date.now = realNow;
    await close();
  }
});

mcpTest('a long conversation shows its newest messages, oldest first: a message just added is always read back', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'acme', scopes: ALL });
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })).structuredContent as any;
  try {
    const conversation = await call('forge.create_conversation', { title: 'Long thread', first_message: 'one' });
    await call('forge.add_message', { conversation_id: conversation.id, content: 'two' });
    await call('forge.add_message', { conversation_id: conversation.id, content: 'three' });
    const two = await call('forge.get_conversation', { conversation_id: conversation.id, message_limit: 2 });
    t.deepEqual(two.messages.map((m: any) => m.content), ['two', 'three']);
    t.like(two, { message_count: 3, messages_truncated: true });

    // Past 500, the most any view shows: the tool, the resource and the summary prompt all keep the newest.
    const old = Array.from({ length: 500 }, (_, i) => ({
      id: uuidv7(), tenant_id: server.tenants.acme.id, conversation_id: conversation.id, role: 'user', content: `old ${i}`, author_id: null, created_at: Date.now() - 86_400_000 + i,
    }));
    for (let i = 0; i < old.length; i += 100) await server.db('forge_messages').insert(old.slice(i, i + 100));
    await call('forge.add_message', { conversation_id: conversation.id, content: 'the newest' });
    const full = await call('forge.get_conversation', { conversation_id: conversation.id, message_limit: 500 });
    t.like(full, { message_count: 504, messages_truncated: true });
    t.deepEqual(full.messages.slice(-4).map((m: any) => m.content), ['one', 'two', 'three', 'the newest']);
    t.is(full.messages[0].content, 'old 4', 'the oldest four are left out');
    const resource = JSON.parse(((await client.readResource({ uri: conversation.uri })).contents[0] as { text: string }).text);
    t.is(resource.messages.at(-1).content, 'the newest');
    const prompt = await client.getPrompt({ name: 'forge.summarize_conversation', arguments: { conversation_id: conversation.id } });
    t.true(JSON.stringify(prompt.messages).includes('the newest'));
  } finally {
    await close();
  }
});

mcpTest('content and documents: save, list by kind, upload, analyse, read as a resource', async (t, server) => {
  const { client, close } = await connect(server, { product: 'forge', tenant: 'globex', scopes: ALL });
  try {
    const saved = (await client.callTool({ name: 'forge.create_content', arguments: { kind: 'email', title: 'Welcome', body: 'Hello and welcome.' } })).structuredContent as any;
    t.deepEqual([saved.kind, saved.status], ['email', 'draft']);
    const emails = (await client.callTool({ name: 'forge.list_content', arguments: { kind: 'email' } })).structuredContent as any;
    t.deepEqual(emails.content.map((c: any) => c.id), [saved.id]);

    const uploaded = (await client.callTool({ name: 'forge.upload_document', arguments: { title: 'Report', text: DOCUMENT, media_type: 'text/markdown' } })).structuredContent as any;
    t.is(uploaded.size_bytes, Buffer.byteLength(DOCUMENT));
    t.is(uploaded.uri, `portico://forge/documents/${uploaded.id}`);
    t.false('text' in uploaded);
    const analysed = (await client.callTool({ name: 'forge.analyze_document', arguments: { document_id: uploaded.id } })).structuredContent as any;
    t.deepEqual(analysed.analysis, analyzeText(DOCUMENT));
    const resource = await client.readResource({ uri: uploaded.uri });
    t.is(JSON.parse((resource.contents[0] as any).text).text, DOCUMENT);
    const missing = await client.readResource({ uri: 'portico://forge/documents/00000000-0000-4000-8000-000000000000' }).catch((e) => e);
    t.is(missing.code, -32002);
    t.like(missing.data, { code: 'not_found', uri: 'portico://forge/documents/00000000-0000-4000-8000-000000000000' });
    const otherProduct = await client.readResource({ uri: `portico://aegis/documents/${uploaded.id}` }).catch((e) => e);
    t.is(otherProduct.code, -32002);
    t.is(otherProduct.data.uri, `portico://aegis/documents/${uploaded.id}`);
  } finally {
    await close();
  }
});

mcpTest('a client that declares elicitation is asked directly; accepting deletes, declining changes nothing', async (t, server) => {
  const asked: string[] = [];
  let answer: 'accept' | 'decline' = 'decline';
  const { client, connection, close } = await connect(server, {
    product: 'forge', tenant: 'acme', scopes: ALL,
    elicit: (message) => {
      asked.push(message);
      return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
    },
  });
  try {
    const target = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).first('id');
    const declined = await client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id } });
    t.is((declined.structuredContent as any).code, 'confirmation_declined');
    t.truthy(await server.db('forge_conversations').where({ id: target.id }).first());
    answer = 'accept';
    const accepted = await client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: target.id } });
    t.falsy(accepted.isError, JSON.stringify(accepted));
    t.is(await server.db('forge_conversations').where({ id: target.id }).first(), undefined);
    t.is(asked.length, 2);
    t.regex(asked[0], new RegExp(`Permanently delete the conversation ${target.id}`));
    t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => r.outcome), ['confirmation_declined', 'ok']);
  } finally {
    await close();
  }
});
