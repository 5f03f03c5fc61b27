/**
 * A sent quote accepted by one call while another deletes it: an accepted quote is a commercial
 * record that is never deleted (docs/products.md), so either the acceptance wins and the deletion is
 * refused with conflict, or the deletion wins and the acceptance is refused (not_found, or conflict
 * when the quote went while it ran); never both succeeding with the accepted quote gone, on every database.
 */
import { connect, mcpTest } from '../helpers/mcp.js';
import { call, confirmation, unexpected } from './parallel_support.js';

mcpTest('a quote accepted while it is deleted is either kept as accepted or deleted unaccepted', async (t, server) => {
  const { client, close } = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: ['cavalier.quotes.read', 'cavalier.quotes.write'] });
  try {
    for (let round = 0; round < 8; round += 1) {
      const quote = await call(client, 'cavalier.create_quote', {
        customer: `Parallel ${round}`, currency: 'EUR', line_items: [{ description: 'Work', quantity: 2, unit_price_minor: 10_000 }],
      });
      t.true(quote.ok, JSON.stringify(quote));
      const id: string = quote.value.id;
      t.true((await call(client, 'cavalier.update_quote_status', { quote_id: id, status: 'sent' })).ok);
      const acceptNow = await confirmation(client, 'cavalier.record_quote_decision', { quote_id: id, decision: 'accepted' });
      const deleteNow = await confirmation(client, 'cavalier.delete_quote', { quote_id: id });
      const [accepted, deleted] = await Promise.all([acceptNow(), deleteNow()]);
      t.deepEqual(unexpected([accepted], ['not_found', 'conflict']), [], `round ${round}: the acceptance succeeded or found the quote gone`);
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
