/** herald through the MCP pipeline with a real SDK client, on every database. */
import type { ExecutionContext } from 'ava';
import { herald } from '../../mcp/products/herald/index.js';
import {
  assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertRefusedUnconfirmed, assertToolError, productSuite, type ProductEnv, type Tenant,
} from './product_suite.js';

const each = productSuite('herald');
const ALL = Object.keys(herald.scopes);
const BROADCASTS = ['herald.broadcasts.read', 'herald.broadcasts.write'];
const TRUST = ['herald.trust.read', 'herald.trust.write'];
const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** Destructive call: confirmation_required first (and nothing changed), then the confirmed call's outcome. */
async function confirmed(t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>, unchanged: () => Promise<void>) {
  const first = await env.call(tenant, scopes, name, args);
  t.true(first.isError);
  t.is(first.structured.code, 'confirmation_required');
  t.deepEqual(first.structured.confirm_with, { tool: name, arguments: { ...args, confirmed: true } });
  await unchanged();
  return env.call(tenant, scopes, name, { ...args, confirmed: true });
}

async function rowOf(env: ProductEnv, table: string, id: string) {
  return env.server.db(table).where({ id }).first();
}

each('every herald tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of herald.tools) {
    await assertInsufficientScope(t, env, 'herald', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each('each tenant sees its own demo broadcasts, documents and subscribers', async (t, env) => {
  const acme = await env.ok(t, 'acme', ['herald.broadcasts.read'], 'herald.list_broadcasts', {});
  const globex = await env.ok(t, 'globex', ['herald.broadcasts.read'], 'herald.list_broadcasts', {});
  t.true(acme.broadcasts.some((b: any) => b.title === 'Planned maintenance, Saturday 02:00 UTC'));
  t.false(acme.broadcasts.some((b: any) => b.title === 'ISO 27001 certification achieved'));
  t.true(globex.broadcasts.some((b: any) => b.title === 'ISO 27001 certification achieved'));
  const sent = await env.ok(t, 'acme', ['herald.broadcasts.read'], 'herald.list_broadcasts', { status: 'sent' });
  t.true(sent.broadcasts.length >= 1);
  t.true(sent.broadcasts.every((b: any) => b.status === 'sent' && typeof b.sent_at === 'string' && typeof b.recipients_count === 'number'));

  const subscribers = await env.ok(t, 'acme', ['herald.broadcasts.read'], 'herald.list_subscribers', { segment: 'customers' });
  t.true(subscribers.subscribers.every((s: any) => s.segment === 'customers' && s.unsubscribed_at === null));
  t.false(subscribers.subscribers.some((s: any) => s.email === 'old@canyon-tools.example'));
  const withGone = await env.ok(t, 'acme', ['herald.broadcasts.read'], 'herald.list_subscribers', { segment: 'customers', include_unsubscribed: true });
  t.true(withGone.subscribers.some((s: any) => s.email === 'old@canyon-tools.example' && s.unsubscribed_at !== null));

  const published = await env.ok(t, 'globex', ['herald.trust.read'], 'herald.list_documents', { status: 'published' });
  t.deepEqual(published.documents.map((d: any) => d.title).sort(), ['Acceptable Use Policy', 'ISO/IEC 27001:2022 certificate']);
  const policies = await env.ok(t, 'acme', ['herald.trust.read'], 'herald.list_documents', { category: 'policy' });
  t.true(policies.documents.every((d: any) => d.category === 'policy'));
  t.true(policies.documents.some((d: any) => d.title === 'Information Security Policy'));
  t.false(policies.documents.some((d: any) => d.title === 'Acceptable Use Policy'));
});

each('list_broadcasts pages with a cursor, without repeating or skipping', async (t, env) => {
  // Only this test writes internal broadcasts of globex, so the listing holds still while it pages.
  for (let i = 0; i < 5; i++) await env.ok(t, 'globex', BROADCASTS, 'herald.create_broadcast', { title: `Paging ${i}`, body: 'b', audience: 'internal' });
  const all = await env.ok(t, 'globex', BROADCASTS, 'herald.list_broadcasts', { audience: 'internal', limit: 100 });
  t.is(all.broadcasts.length, 5);
  t.deepEqual(all.broadcasts.map((b: any) => b.title), ['Paging 4', 'Paging 3', 'Paging 2', 'Paging 1', 'Paging 0']);
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.ok(t, 'globex', BROADCASTS, 'herald.list_broadcasts', { audience: 'internal', limit: 2, ...(cursor ? { cursor } : {}) });
    t.true(page.broadcasts.length <= 2);
    seen.push(...page.broadcasts.map((b: any) => b.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  t.deepEqual(seen, all.broadcasts.map((b: any) => b.id));
  t.is(new Set(seen).size, seen.length);
});

each('a broadcast goes draft → scheduled → sent, and every other move is refused with a clear error', async (t, env) => {
  const draft = await env.ok(t, 'acme', BROADCASTS, 'herald.create_broadcast', { title: 'Holiday hours', body: 'Support closes at noon on Dec 24.', audience: 'customers' });
  t.is(draft.status, 'draft');
  t.is(draft.uri, `portico://herald/broadcasts/${draft.id}`);
  t.is(draft.scheduled_for, null);
  const edited = await env.ok(t, 'acme', BROADCASTS, 'herald.update_broadcast', { broadcast_id: draft.id, body: 'Support closes at 13:00 on Dec 24.' });
  t.is(edited.body, 'Support closes at 13:00 on Dec 24.');
  t.is(edited.title, 'Holiday hours');

  // A draft cannot be sent: schedule first. Nobody is asked to confirm a sending that cannot happen.
  const early = await assertRefusedUnconfirmed(t, env, 'acme', BROADCASTS, 'herald.send_broadcast', { broadcast_id: draft.id }, 'conflict');
  t.regex(early.message, /is draft; schedule it first/);
  t.is((await rowOf(env, 'herald_broadcasts', draft.id)).status, 'draft');

  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.schedule_broadcast', { broadcast_id: draft.id, send_at: '2020-01-01T00:00:00Z' }, 'send_at');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.schedule_broadcast', { broadcast_id: draft.id, send_at: 'next tuesday' }, 'send_at');
  const at = future(3);
  const scheduled = await env.ok(t, 'acme', BROADCASTS, 'herald.schedule_broadcast', { broadcast_id: draft.id, send_at: at });
  t.is(scheduled.status, 'scheduled');
  t.is(scheduled.scheduled_for, at);
  const again = await assertToolError(t, env, 'acme', BROADCASTS, 'herald.schedule_broadcast', { broadcast_id: draft.id, send_at: at }, 'conflict');
  t.regex(again.message, /only a draft can be scheduled/);
  await assertToolError(t, env, 'acme', BROADCASTS, 'herald.update_broadcast', { broadcast_id: draft.id, title: 'Changed' }, 'conflict');
  const back = await env.ok(t, 'acme', BROADCASTS, 'herald.unschedule_broadcast', { broadcast_id: draft.id });
  t.is(back.status, 'draft');
  t.is(back.scheduled_for, null);
  await env.ok(t, 'acme', BROADCASTS, 'herald.schedule_broadcast', { broadcast_id: draft.id, send_at: at });

  // Recipients: active subscribers of the audience at the moment of sending.
  const [{ n: customers }] = await env.server.db('herald_subscribers').where({ tenant_id: env.server.tenants.acme.id, segment: 'customers' }).whereNull('unsubscribed_at').count({ n: '*' });
  const before = await env.ok(t, 'acme', BROADCASTS, 'herald.get_broadcast', { broadcast_id: draft.id });
  t.is(before.audience_size, Number(customers));
  const sent = await confirmed(t, env, 'acme', BROADCASTS, 'herald.send_broadcast', { broadcast_id: draft.id }, async () => {
    const row = await rowOf(env, 'herald_broadcasts', draft.id);
    t.is(row.status, 'scheduled');
    t.is(row.sent_at, null);
  });
  t.false(sent.isError, JSON.stringify(sent.structured));
  t.is(sent.structured.status, 'sent');
  t.is(sent.structured.recipients_count, Number(customers));
  t.is(sent.structured.sent_by, env.server.users['admin@acme.example']);
  t.true(Math.abs(Date.parse(sent.structured.sent_at) - Date.now()) < 60_000);

  // Done once: a sent broadcast cannot be sent again, recalled or edited.
  const twice = await assertRefusedUnconfirmed(t, env, 'acme', BROADCASTS, 'herald.send_broadcast', { broadcast_id: draft.id }, 'conflict');
  t.regex(twice.message, /cannot be sent again/);
  t.is((await rowOf(env, 'herald_broadcasts', draft.id)).sent_at, Date.parse(sent.structured.sent_at));
  await assertToolError(t, env, 'acme', BROADCASTS, 'herald.unschedule_broadcast', { broadcast_id: draft.id }, 'conflict');
  await assertToolError(t, env, 'acme', BROADCASTS, 'herald.update_broadcast', { broadcast_id: draft.id, title: 'x' }, 'conflict');
});

each('add_subscriber widens the audience, refuses a duplicate e-mail and does not add back one that unsubscribed', async (t, env) => {
  const broadcast = await env.ok(t, 'globex', BROADCASTS, 'herald.create_broadcast', { title: 'Partner update', body: 'New tiers.', audience: 'partners' });
  const before = (await env.ok(t, 'globex', BROADCASTS, 'herald.get_broadcast', { broadcast_id: broadcast.id })).audience_size;
  const added = await env.ok(t, 'globex', BROADCASTS, 'herald.add_subscriber', { email: 'New.Partner@Example.com', name: 'New Partner', segment: 'partners' });
  t.is(added.email, 'new.partner@example.com');
  t.is(added.segment, 'partners');
  t.is((await env.ok(t, 'globex', BROADCASTS, 'herald.get_broadcast', { broadcast_id: broadcast.id })).audience_size, before + 1);
  const duplicate = await assertToolError(t, env, 'globex', BROADCASTS, 'herald.add_subscriber', { email: 'new.partner@example.com', segment: 'customers' }, 'conflict');
  t.regex(duplicate.message, /already a subscriber/);
  // A person who unsubscribed is not added back, and the refusal says why rather than "already a subscriber".
  // (acme's demo data has old@canyon-tools.example, a customer who unsubscribed 20 days ago.)
  const gone = await assertToolError(t, env, 'acme', BROADCASTS, 'herald.add_subscriber', { email: 'Old@Canyon-Tools.example', segment: 'partners' }, 'conflict');
  const listed = await env.ok(t, 'acme', BROADCASTS, 'herald.list_subscribers', { segment: 'customers', include_unsubscribed: true });
  const old = listed.subscribers.find((s: { email: string }) => s.email === 'old@canyon-tools.example');
  t.is(gone.message, `old@canyon-tools.example unsubscribed on ${old.unsubscribed_at.slice(0, 10)}; Herald does not add back a person who unsubscribed`);
  t.like(gone, { subscriber_id: old.id, unsubscribed_at: old.unsubscribed_at });
  t.is(old.segment, 'customers', 'the refused call changed nothing');
  await assertInvalidArguments(t, env, 'globex', BROADCASTS, 'herald.add_subscriber', { email: 'not-an-email', segment: 'partners' }, 'email');
  await assertInvalidArguments(t, env, 'globex', BROADCASTS, 'herald.add_subscriber', { email: 'a@b.example', segment: 'vips' }, 'segment');
});

each('trust-center documents: publish, refuse edits while published, unpublish with confirmation', async (t, env) => {
  const doc = await env.ok(t, 'acme', TRUST, 'herald.create_document', { title: 'Data Retention Policy', category: 'policy', body: 'We keep logs for 90 days.' });
  t.is(doc.status, 'draft');
  t.is(doc.visibility, 'public');
  t.is(doc.version, 0);
  const edited = await env.ok(t, 'acme', TRUST, 'herald.update_document', { document_id: doc.id, body: 'We keep logs for 30 days.', visibility: 'nda' });
  t.is(edited.body, 'We keep logs for 30 days.');
  t.is(edited.visibility, 'nda');

  const published = await env.ok(t, 'acme', TRUST, 'herald.publish_document', { document_id: doc.id });
  t.is(published.status, 'published');
  t.is(published.version, 1);
  t.truthy(published.published_at);
  const twice = await assertToolError(t, env, 'acme', TRUST, 'herald.publish_document', { document_id: doc.id }, 'conflict');
  t.regex(twice.message, /already published/);
  await assertToolError(t, env, 'acme', TRUST, 'herald.update_document', { document_id: doc.id, title: 'x' }, 'conflict');

  const unpublished = await confirmed(t, env, 'acme', TRUST, 'herald.unpublish_document', { document_id: doc.id }, async () => {
    t.is((await rowOf(env, 'herald_documents', doc.id)).status, 'published');
  });
  t.false(unpublished.isError, JSON.stringify(unpublished.structured));
  t.is(unpublished.structured.status, 'draft');
  t.is(unpublished.structured.published_at, null);
  t.is(unpublished.structured.body, 'We keep logs for 30 days.');
  // A draft is not asked to be unpublished.
  const again = await assertRefusedUnconfirmed(t, env, 'acme', TRUST, 'herald.unpublish_document', { document_id: doc.id }, 'conflict');
  t.regex(again.message, /only a published document can be unpublished/);
  t.is((await rowOf(env, 'herald_documents', doc.id)).status, 'draft');

  const republished = await env.ok(t, 'acme', TRUST, 'herald.publish_document', { document_id: doc.id });
  t.is(republished.version, 2);
  const read = await env.ok(t, 'acme', ['herald.trust.read'], 'herald.get_document', { document_id: doc.id });
  t.is(read.status, 'published');
  t.is(read.version, 2);
});

each('invalid herald arguments are refused naming the field, and nothing is written', async (t, env) => {
  const count = async () => Number((await env.server.db('herald_broadcasts').where({ tenant_id: env.server.tenants.acme.id }).whereIn('title', ['t', 'x'.repeat(201)]).count({ n: '*' }))[0].n);
  const before = await count();
  t.is(before, 0);
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.create_broadcast', { title: 'x'.repeat(201), body: 'b' }, 'title');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.create_broadcast', { title: '   ', body: 'b' }, 'title');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.create_broadcast', { title: 't', body: 'b', audience: 'martians' }, 'audience');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.create_broadcast', { title: 't', body: 42 }, 'body');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.create_broadcast', { title: 't', body: 'b', tenant_id: 'x' }, 'tenant_id');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.list_broadcasts', { limit: 0 }, 'limit');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.list_broadcasts', { status: 'archived' }, 'status');
  await assertInvalidArguments(t, env, 'acme', BROADCASTS, 'herald.list_broadcasts', { cursor: 'bm90IGEgY3Vyc29y' }, 'cursor');
  await assertInvalidArguments(t, env, 'acme', TRUST, 'herald.create_document', { title: 't', category: 'memo', body: 'b' }, 'category');
  t.is(await count(), before);
  await assertToolError(t, env, 'acme', BROADCASTS, 'herald.get_broadcast', { broadcast_id: '00000000-0000-4000-8000-000000000000' }, 'not_found');
  await assertToolError(t, env, 'acme', BROADCASTS, 'herald.get_broadcast', { broadcast_id: 'nonsense' }, 'not_found');
});

each("another tenant's broadcast or document is forbidden_cross_tenant for every tool, resource and prompt", async (t, env) => {
  const broadcast = (await env.server.db('herald_broadcasts').where({ tenant_id: env.server.tenants.globex.id }).first()).id;
  const document = (await env.server.db('herald_documents').where({ tenant_id: env.server.tenants.globex.id }).first()).id;
  for (const tool of herald.tools) {
    const args: Record<string, unknown> = {};
    if ('broadcast_id' in tool.input) args.broadcast_id = broadcast;
    if ('document_id' in tool.input) args.document_id = document;
    if (!Object.keys(args).length) continue;
    if (tool.name === 'herald.schedule_broadcast') args.send_at = future(1);
    await assertCrossTenant(t, env, 'herald', 'acme', ALL, tool.name, args);
  }
  const before = await rowOf(env, 'herald_broadcasts', broadcast);
  t.deepEqual(await rowOf(env, 'herald_broadcasts', broadcast), before);
  const client = await env.client('acme', ALL);
  await t.throwsAsync(client.readResource({ uri: `portico://herald/broadcasts/${broadcast}` }), { message: /another organization/ });
  await t.throwsAsync(client.readResource({ uri: `portico://herald/documents/${document.toUpperCase()}` }), { message: /another organization/ });
  await t.throwsAsync(client.getPrompt({ name: 'herald.review_broadcast', arguments: { broadcast_id: broadcast } }), { message: /another organization/ });
});

each('broadcast and document resources and the review prompt carry the tenant data', async (t, env) => {
  const client = await env.client('acme', ALL);
  const { broadcasts } = await env.ok(t, 'acme', ALL, 'herald.list_broadcasts', { status: 'scheduled' });
  const target = broadcasts.find((b: any) => b.title === 'Planned maintenance, Saturday 02:00 UTC');
  const read = await client.readResource({ uri: `portico://herald/broadcasts/${target.id}` });
  t.is(read.contents[0].mimeType, 'application/json');
  t.deepEqual(JSON.parse((read.contents[0] as { text: string }).text), { ...target, uri: `portico://herald/broadcasts/${target.id}` });

  const { documents } = await env.ok(t, 'acme', ALL, 'herald.list_documents', { category: 'report' });
  const doc = JSON.parse(((await client.readResource({ uri: `portico://herald/documents/${documents[0].id}` })).contents[0] as { text: string }).text);
  t.is(doc.title, 'SOC 2 Type II report 2026');
  t.is(doc.visibility, 'nda');

  const templates = await client.listResourceTemplates();
  t.deepEqual(templates.resourceTemplates.map((r) => r.uriTemplate).sort(), ['portico://herald/broadcasts/{id}', 'portico://herald/documents/{id}']);

  const [{ n }] = await env.server.db('herald_subscribers').where({ tenant_id: env.server.tenants.acme.id }).whereNull('unsubscribed_at').count({ n: '*' });
  const prompt = await client.getPrompt({ name: 'herald.review_broadcast', arguments: { broadcast_id: target.id } });
  const text = (prompt.messages[0].content as { text: string }).text;
  t.regex(text, /Acme Corporation/);
  t.regex(text, /The API will be read-only for up to 30 minutes/);
  t.true(text.includes(`which has ${Number(n)} active subscribers right now`));
  t.regex(text, /Information Security Policy \(policy, public, version 3\)/);
  const embedded = prompt.messages[1].content as { type: string; resource: { uri: string; text: string } };
  t.is(embedded.resource.uri, `portico://herald/broadcasts/${target.id}`);

  const readOnly = await env.client('acme', ['herald.trust.read']);
  await t.throwsAsync(readOnly.getPrompt({ name: 'herald.review_broadcast', arguments: { broadcast_id: target.id } }), { message: /herald\.broadcasts\.read/ });
});
