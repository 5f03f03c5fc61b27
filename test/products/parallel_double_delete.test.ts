/**
 * Two connections confirming the deletion of the same record at the same moment: one deletes it,
 * the other answers not_found, as it would a moment later; the record is not reported deleted
 * twice (nor audited as two deletions), on every database.
 */
import type { ExecutionContext } from 'ava';
import { connect, mcpTest, auditOf, type Connected, type McpTestServer } from '../helpers/mcp.js';
import { call, confirmation } from './parallel_support.js';

interface Case {
  product: string;
  scopes: string[];
  create(client: Connected['client']): Promise<string>;
  tool: string;
  argument: string;
}

const CASES: Case[] = [
  {
    product: 'aegis', scopes: ['aegis.scans.read', 'aegis.scans.write'], tool: 'aegis.delete_scan', argument: 'scan_id',
    create: async (client) => (await call(client, 'aegis.start_scan', {})).value.id,
  },
  {
    product: 'harvest', scopes: ['harvest.lots.read', 'harvest.lots.write'], tool: 'harvest.delete_lot', argument: 'lot_id',
    create: async (client) => (await call(client, 'harvest.create_lot', { item: 'Copper pipe', condition: 'good', quantity: 3, currency: 'EUR', estimated_value_minor: 1200 })).value.id,
  },
  {
    product: 'forge', scopes: ['forge.chat.read', 'forge.chat.write'], tool: 'forge.delete_conversation', argument: 'conversation_id',
    create: async (client) => (await call(client, 'forge.create_conversation', { title: 'Twice' })).value.id,
  },
  {
    product: 'pawvault', scopes: ['pawvault.pets.read', 'pawvault.pets.write'], tool: 'pawvault.delete_pet', argument: 'pet_id',
    create: async (client) => (await call(client, 'pawvault.add_pet', { name: 'Twice', species: 'cat' })).value.id,
  },
  {
    product: 'reclaim', scopes: ['reclaim.policies.read', 'reclaim.policies.write'], tool: 'reclaim.delete_policy', argument: 'policy_id',
    create: async (client) => (await call(client, 'reclaim.create_policy', { name: `Twice ${Math.random()}`, target_kind: 'database', target_name: 'db', retention_days: 7, rpo_minutes: 60 })).value.id,
  },
  {
    product: 'cavalier', scopes: ['cavalier.quotes.read', 'cavalier.quotes.write'], tool: 'cavalier.delete_quote', argument: 'quote_id',
    create: async (client) => (await call(client, 'cavalier.create_quote', { customer: 'Twice', currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price_minor: 100 }] })).value.id,
  },
];

async function deleteTwice(t: ExecutionContext, server: McpTestServer, c: Case): Promise<void> {
  const first = await connect(server, { product: c.product, tenant: 'acme', scopes: c.scopes });
  const second = await connect(server, { product: c.product, tenant: 'acme', scopes: c.scopes });
  try {
    for (let round = 0; round < 4; round += 1) {
      const id = await c.create(first.client);
      t.truthy(id);
      const args = { [c.argument]: id };
      const [a, b] = await Promise.all([confirmation(first.client, c.tool, args), confirmation(second.client, c.tool, args)]);
      const outcomes = await Promise.all([a(), b()]);
      t.deepEqual(outcomes.map((o) => o.ok ? 'ok' : o.code).sort(), ['not_found', 'ok'], `${c.tool} round ${round}: ${JSON.stringify(outcomes)}`);
    }
    const deletions = await auditOf(server, 'acme', { name: c.tool, outcome: 'ok' });
    t.is(deletions.length, 4, `${c.tool}: one deletion audited per record`);
  } finally {
    await first.close();
    await second.close();
  }
}

for (const c of CASES) {
  mcpTest(`${c.tool} confirmed on two connections at once deletes once and answers the other not_found`, (t, server) => deleteTwice(t, server, c));
}
