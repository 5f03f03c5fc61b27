/**
 * pawvault.prepare_vet_visit is a briefing to hand to a vet: its "current medications" must be
 * every medication the pet is on, however many finished courses were started since, and the pet
 * it embeds under the pet's resource URI must be what reading that URI returns.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ExecutionContext } from 'ava';
import { pawvault } from '../../../mcp/products/pawvault/index.js';
import { connect, mcpTest } from '../../helpers/mcp.js';

const ALL = Object.keys(pawvault.scopes);
const DAY = 86_400_000;
/** A calendar date `days` from today (UTC), as the server computes "today". */
const day = (days: number) => new Date(Math.floor(Date.now() / DAY) * DAY + days * DAY).toISOString().slice(0, 10);

async function ok(t: ExecutionContext, client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) t.fail(`${name}: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
}

mcpTest('prepare_vet_visit lists every current medication, not only those among the newest records', async (t, server) => {
  const { client, close } = await connect(server, { product: 'pawvault', tenant: 'acme', scopes: ALL });
  try {
    const pet = await ok(t, client, 'pawvault.add_pet', { name: 'Chronic', species: 'dog' });
    // A lifelong medication started years ago, then 25 short courses, all ended, started since.
    await ok(t, client, 'pawvault.add_medication', { pet_id: pet.id, name: 'Levothyroxine', dosage: '0.2 mg', frequency: 'twice daily', start_date: day(-900) });
    for (let i = 0; i < 25; i += 1) {
      await ok(t, client, 'pawvault.add_medication', { pet_id: pet.id, name: `Course ${i}`, dosage: '1 tablet', frequency: 'daily', start_date: day(-400 + i * 10), end_date: day(-395 + i * 10) });
    }
    // One that starts next week is not current either.
    await ok(t, client, 'pawvault.add_medication', { pet_id: pet.id, name: 'Booster', dosage: '1 ml', frequency: 'once', start_date: day(7) });
    const prompt = await client.getPrompt({ name: 'pawvault.prepare_vet_visit', arguments: { pet_id: pet.id } });
    const text = (prompt.messages[0].content as { text: string }).text;
    t.is(/Current medications:\n([\s\S]*?)\n\n/.exec(text)?.[1], '- Levothyroxine 0.2 mg, twice daily');
  } finally {
    await close();
  }
});

mcpTest('prepare_vet_visit embeds the pet as its resource shows it', async (t, server) => {
  const { client, close } = await connect(server, { product: 'pawvault', tenant: 'acme', scopes: ALL });
  try {
    const pet = await ok(t, client, 'pawvault.add_pet', { name: 'Embedded', species: 'cat' });
    for (let i = 0; i < 15; i += 1) await ok(t, client, 'pawvault.record_visit', { pet_id: pet.id, visited_on: day(-100 + i), reason: `Visit ${i}` });
    const prompt = await client.getPrompt({ name: 'pawvault.prepare_vet_visit', arguments: { pet_id: pet.id } });
    const embedded = prompt.messages.map((m) => m.content).find((c) => c.type === 'resource') as { resource: { uri: string; text: string } };
    t.is(embedded.resource.uri, `portico://pawvault/pets/${pet.id}`);
    const read = await client.readResource({ uri: embedded.resource.uri });
    const resource = JSON.parse((read.contents[0] as { text: string }).text);
    t.is(resource.visits.length, 15);
    t.deepEqual(JSON.parse(embedded.resource.text), resource);
  } finally {
    await close();
  }
});
