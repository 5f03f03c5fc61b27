/**
 * A sent quote accepted by one call while another deletes it: an accepted quote is a commercial
 * record that is never deleted (docs/products.md), so either the acceptance wins and the deletion is
 * refused with conflict, or the deletion wins and the acceptance finds the quote gone (not_found);
 * never both succeeding with the accepted quote gone, on every database. On PostgreSQL, calls lined
 * up behind one another show each outcome: gone meanwhile is not_found, decided meanwhile is conflict.
 */
import type { ExecutionContext } from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, mcpPostgresTest, mcpTest } from '../helpers/mcp.js';
import { call, confirmation, connections, inLine, unexpected } from './parallel_support.js';

const SCOPES = ['cavalier.quotes.read', 'cavalier.quotes.write'];

async function createQuote(t: ExecutionContext, client: Client, customer: string, status: 'draft' | 'sent'): Promise<string> {
  const quote = await call(client, 'cavalier.create_quote', {
    customer, currency: 'EUR', line_items: [{ description: 'Work', quantity: 2, unit_price_minor: 10_000 }],
  });
  t.true(quote.ok, JSON.stringify(quote));
  if (status === 'sent') t.true((await call(client, 'cavalier.update_quote_status', { quote_id: quote.value.id, status: 'sent' })).ok);
  return quote.value.id;
}

mcpTest('a quote accepted while it is deleted is either kept as accepted or deleted unaccepted', async (t, server) => {
  const { client, close } = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: SCOPES });
  try {
    for (let round = 0; round < 8; round += 1) {
      const id = await createQuote(t, client, `Parallel ${round}`, 'sent');
      const acceptNow = await confirmation(client, 'cavalier.record_quote_decision', { quote_id: id, decision: 'accepted' });
      const deleteNow = await confirmation(client, 'cavalier.delete_quote', { quote_id: id });
      const [accepted, deleted] = await Promise.all([acceptNow(), deleteNow()]);
      t.deepEqual(unexpected([accepted], ['not_found']), [], `round ${round}: the acceptance succeeded or found the quote gone`);
      t.deepEqual(unexpected([deleted], ['conflict']), [], `round ${round}: the deletion succeeded or was refused`);
      t.not(accepted.ok, deleted.ok, `round ${round}: exactly one of the two succeeded (${JSON.stringify([accepted, deleted])})`);
      const row = await server.db('cavalier_quotes').where({ id }).first();
      if (accepted.ok) {
        t.is(row?.status, 'accepted', `round ${round}: the accepted quote is kept`);
        t.is((await server.db('cavalier_quote_lines').where({ quote_id: id })).length, 1, 'with its line items');
      } else {
        t.is(row, undefined);
        t.is((await server.db('cavalier_quote_lines').where({ quote_id: id })).length, 0);
      }
    }
  } finally {
    await close();
  }
});

mcpPostgresTest('a quote deleted while a status change or a decision waits for it answers not_found; one decided meanwhile answers conflict', async (t, server) => {
  const [a, b] = await connections(server, { product: 'cavalier', tenant: 'acme', scopes: SCOPES }, 2);
  try {
    const draft = await createQuote(t, a.client, 'Deleted draft', 'draft');
    const [deletedDraft, sent] = await inLine(t, server.db, 'cavalier_quotes', draft, [
      await confirmation(a.client, 'cavalier.delete_quote', { quote_id: draft }),
      () => call(b.client, 'cavalier.update_quote_status', { quote_id: draft, status: 'sent' }),
    ]);
    t.true(deletedDraft.ok, JSON.stringify(deletedDraft));
    t.is(sent.code, 'not_found', JSON.stringify(sent));

    const offer = await createQuote(t, a.client, 'Deleted offer', 'sent');
    const [deletedOffer, accepted] = await inLine(t, server.db, 'cavalier_quotes', offer, [
      await confirmation(a.client, 'cavalier.delete_quote', { quote_id: offer }),
      await confirmation(b.client, 'cavalier.record_quote_decision', { quote_id: offer, decision: 'accepted' }),
    ]);
    t.true(deletedOffer.ok, JSON.stringify(deletedOffer));
    t.is(accepted.code, 'not_found', JSON.stringify(accepted));

    const decided = await createQuote(t, a.client, 'Decided offer', 'sent');
    const [rejected, acceptedLate] = await inLine(t, server.db, 'cavalier_quotes', decided, [
      await confirmation(a.client, 'cavalier.record_quote_decision', { quote_id: decided, decision: 'rejected' }),
      await confirmation(b.client, 'cavalier.record_quote_decision', { quote_id: decided, decision: 'accepted' }),
    ]);
    t.true(rejected.ok, JSON.stringify(rejected));
    t.is(acceptedLate.code, 'conflict', JSON.stringify(acceptedLate));
    t.is((await server.db('cavalier_quotes').where({ id: decided }).first()).status, 'rejected');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
