/**
 * PostgreSQL: a quote or statement of work created for a deal while the deal is closed as lost.
 * The creation reads the deal's stage once the close has committed (or before it starts): a quote
 * or statement of work is never added to a lost deal.
 */
import { cavalier } from '../../mcp/products/cavalier/index.js';
import { mcpPostgresTest } from '../helpers/mcp.js';
import { call, confirmation, connections, inLine } from './parallel_support.js';

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

mcpPostgresTest('a quote or statement of work created while its deal is closed as lost is refused with conflict', async (t, server) => {
  const [a, b] = await connections(server, { product: 'cavalier', tenant: 'acme', scopes: Object.keys(cavalier.scopes) }, 2);
  try {
    const creations = {
      quote: (dealId: string) => call(b.client, 'cavalier.create_quote', { deal_id: dealId, currency: 'EUR', line_items: [{ description: 'Work', quantity: 1, unit_price_minor: 50_000 }] }),
      sow: (dealId: string) => call(b.client, 'cavalier.create_sow', {
        deal_id: dealId, title: 'Rollout', scope_summary: 'Roll out the platform.', milestones: [{ title: 'Kick-off', due_date: inDays(7), amount_minor: 50_000 }],
      }),
    };
    for (const [what, create] of Object.entries(creations)) {
      const deal = await call(a.client, 'cavalier.create_deal', { title: `Losing ${what}`, customer: 'Initech', currency: 'EUR', value_minor: 50_000, stage: 'proposal' });
      t.true(deal.ok, JSON.stringify(deal));
      const [lost, created] = await inLine(t, server.db, 'cavalier_deals', deal.value.id, [
        await confirmation(a.client, 'cavalier.close_deal', { deal_id: deal.value.id, outcome: 'lost' }),
        () => create(deal.value.id),
      ]);
      t.true(lost.ok, JSON.stringify(lost));
      t.is(created.code, 'conflict', `${what}: ${JSON.stringify(created)}`);
      t.is((await server.db(what === 'quote' ? 'cavalier_quotes' : 'cavalier_sows').where({ deal_id: deal.value.id })).length, 0, `no ${what} on the lost deal`);
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
