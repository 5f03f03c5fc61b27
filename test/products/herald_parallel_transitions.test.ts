/**
 * herald's transitions racing each other: publishing a trust-center document makes exactly one new
 * version however the publishes and unpublishes of it interleave, and a broadcast is sent to the
 * audience it has when it is sent. Every call decides on, and computes from, the record as it is
 * when its turn comes (docs/herald_terrain_people_pawvault_midas.md).
 */
import type { ExecutionContext } from 'ava';
import { holdRow } from '../helpers/db.js';
import { connect, mcpPostgresTest, mcpTest, type Connected, type GrantOptions } from '../helpers/mcp.js';
import { call, confirmation, connections, unexpected } from './parallel_support.js';

const TRUST: GrantOptions = { product: 'herald', tenant: 'acme', scopes: ['herald.trust.read', 'herald.trust.write'] };
const BROADCASTS = ['herald.broadcasts.read', 'herald.broadcasts.write'];

async function createDocument(t: ExecutionContext, connected: Connected, title: string): Promise<string> {
  const created = await call(connected.client, 'herald.create_document', { title, category: 'policy', visibility: 'public', body: 'Text.' });
  t.true(created.ok, JSON.stringify(created));
  return created.value.id;
}

mcpTest('a document published, unpublished and published again at once gets one version per publish', async (t, server) => {
  const [a, b, c] = await connections(server, TRUST, 3);
  try {
    const id = await createDocument(t, a, 'Parallel publishing');
    let publishes = 0;
    for (let round = 0; round < 8; round += 1) {
      // The unpublish is confirmed while the document is published (nobody is asked to unpublish a
      // draft), then the document goes back to draft so that the three calls race from there.
      if ((await server.db('herald_documents').where({ id }).first()).status === 'draft') {
        const published = await call(a.client, 'herald.publish_document', { document_id: id });
        t.true(published.ok, JSON.stringify(published));
        publishes += 1;
      }
      const unpublishNow = await confirmation(b.client, 'herald.unpublish_document', { document_id: id });
      t.true((await (await confirmation(a.client, 'herald.unpublish_document', { document_id: id }))()).ok);
      const [first, unpublished, second] = await Promise.all([
        call(a.client, 'herald.publish_document', { document_id: id }),
        unpublishNow(),
        call(c.client, 'herald.publish_document', { document_id: id }),
      ]);
      t.deepEqual(unexpected([first, unpublished, second], ['conflict']), [], `round ${round}`);
      publishes += [first, second].filter((o) => o.ok).length;
      const row = await server.db('herald_documents').where({ id }).first();
      t.is(Number(row.version), publishes, `round ${round}: one version per publish`);
      const answered = [first, second].filter((o) => o.ok).map((o) => o.value.version).sort();
      t.deepEqual(answered, [...new Set(answered)], `round ${round}: no two publishes answer the same version`);
    }
  } finally {
    await Promise.all([a, b, c].map((connected) => connected.close()));
  }
});

mcpPostgresTest('a publish that waits while another writer publishes and unpublishes the document makes the version after theirs', async (t, server) => {
  const [a] = await connections(server, TRUST, 1);
  try {
    const id = await createDocument(t, a, 'Publishing behind another writer');
    const held = await holdRow(server.db, 'herald_documents', id);
    const published = call(a.client, 'herald.publish_document', { document_id: id });
    t.true(await held.waiting(1), 'the publish reached the document');
    // Another instance publishes the draft (version 1) and takes it back to draft while the call waits.
    await held.trx('herald_documents').where({ id }).update({ status: 'published', version: 1, published_at: Date.now() });
    await held.trx('herald_documents').where({ id }).update({ status: 'draft', published_at: null });
    await held.release();
    const outcome = await published;
    t.true(outcome.ok, JSON.stringify(outcome));
    t.is(outcome.value.version, 2);
    t.is(Number((await server.db('herald_documents').where({ id }).first()).version), 2, 'the second publish is version 2');
  } finally {
    await a.close();
  }
});

mcpPostgresTest('a broadcast sent while another writer changes its audience counts the recipients of the audience it is sent to', async (t, server) => {
  const { client, close } = await connect(server, { product: 'herald', tenant: 'acme', scopes: BROADCASTS });
  try {
    const activeIn = async (segment: string) => Number((await server.db('herald_subscribers').where({ tenant_id: server.tenants.acme.id, segment }).whereNull('unsubscribed_at').count({ n: '*' }))[0].n);
    t.not(await activeIn('customers'), await activeIn('partners'), 'the two audiences differ in size');
    const draft = await call(client, 'herald.create_broadcast', { title: 'Audience moved', body: 'Text.', audience: 'customers' });
    t.true(draft.ok, JSON.stringify(draft));
    const send_at = new Date(Date.now() + 86_400_000).toISOString();
    t.true((await call(client, 'herald.schedule_broadcast', { broadcast_id: draft.value.id, send_at })).ok);
    const sendNow = await confirmation(client, 'herald.send_broadcast', { broadcast_id: draft.value.id });

    const held = await holdRow(server.db, 'herald_broadcasts', draft.value.id);
    const sent = sendNow();
    t.true(await held.waiting(1), 'the send reached the broadcast');
    // Meanwhile another instance unschedules it, moves it to the partners and schedules it again: its audience is all that changed.
    await held.trx('herald_broadcasts').where({ id: draft.value.id }).update({ audience: 'partners' });
    await held.release();
    const outcome = await sent;
    t.true(outcome.ok, JSON.stringify(outcome));
    t.is(outcome.value.audience, 'partners');
    t.is(outcome.value.recipients_count, await activeIn('partners'));
    t.is(Number((await server.db('herald_broadcasts').where({ id: draft.value.id }).first()).recipients_count), await activeIn('partners'));
  } finally {
    await close();
  }
});
