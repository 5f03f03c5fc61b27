/**
 * What a prompt gives a model must agree with what the tools and resources give: a record embedded
 * under a resource's URI is what reading that URI returns, the text states only what the data
 * supports, a prompt's argument searches as the matching tool's does, and a cut list says it is
 * cut. Each test has a server of its own (mcpTest). Found by a review of the products' prompts.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ExecutionContext } from 'ava';
import { cavalier } from '../../mcp/products/cavalier/index.js';
import { harvest } from '../../mcp/products/harvest/index.js';
import { herald } from '../../mcp/products/herald/index.js';
import { pawvault } from '../../mcp/products/pawvault/index.js';
import { people } from '../../mcp/products/people/index.js';
import { terrain } from '../../mcp/products/terrain/index.js';
import { connect, mcpTest } from '../helpers/mcp.js';

const DAY = 86_400_000;

async function ok(t: ExecutionContext, client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) t.fail(`${name}: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
}

/** A destructive tool, confirmed as the protocol asks: the first call answers confirmation_required. */
async function confirmed(t: ExecutionContext, client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const first = await client.callTool({ name, arguments: args });
  t.is((first.structuredContent as { code?: string }).code, 'confirmation_required', JSON.stringify(first.structuredContent));
  return ok(t, client, name, { ...args, confirmed: true });
}

type Content = { type: string; text?: string; resource?: { uri: string; text: string } };

/** The resources a prompt embeds, by URI. */
function embedded(messages: Array<{ content: unknown }>): Array<{ uri: string; text: string }> {
  return messages.map((m) => m.content as Content).filter((c) => c.type === 'resource').map((c) => c.resource!);
}

function texts(messages: Array<{ content: unknown }>): string {
  return messages.map((m) => m.content as Content).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function read(client: Client, uri: string): Promise<unknown> {
  return JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text);
}

// ---------------------------------------------------------------- embedded resource = resources/read

mcpTest('harvest.intel_brief embeds each report as its resource shows it', async (t, server) => {
  const { client, close } = await connect(server, { product: 'harvest', tenant: 'acme', scopes: Object.keys(harvest.scopes) });
  try {
    await ok(t, client, 'harvest.create_report', { subject: 'Tungsten offcuts', source: 'Desk', summary: 'Tungsten offcuts are scarce.', confidence: 'high', tags: ['tungsten'] });
    const prompt = await client.getPrompt({ name: 'harvest.intel_brief', arguments: { topic: 'tungsten' } });
    const blocks = embedded(prompt.messages);
    t.true(blocks.length >= 1);
    for (const block of blocks) t.deepEqual(JSON.parse(block.text), await read(client, block.uri), block.uri);
  } finally {
    await close();
  }
});

/** A test that the record `prompt` embeds under `uri` (what `setUp` made) is what reading `uri` returns. */
function embedsAsItsResource(title: string, product: { id: string; scopes: Record<string, string> }, setUp: (t: ExecutionContext, client: Client) => Promise<{ prompt: string; args: Record<string, string>; uri: string }>): void {
  mcpTest(title, async (t, server) => {
    const { client, close } = await connect(server, { product: product.id, tenant: 'acme', scopes: Object.keys(product.scopes) });
    try {
      const { prompt, args, uri } = await setUp(t, client);
      const [block] = embedded((await client.getPrompt({ name: prompt, arguments: args })).messages);
      t.is(block.uri, uri);
      t.deepEqual(JSON.parse(block.text), await read(client, block.uri));
    } finally {
      await close();
    }
  });
}

embedsAsItsResource('herald.review_broadcast embeds the broadcast as its resource shows it', herald, async (t, client) => {
  const broadcast = await ok(t, client, 'herald.create_broadcast', { title: 'Maintenance', body: 'We patch on Sunday.', audience: 'customers' });
  return { prompt: 'herald.review_broadcast', args: { broadcast_id: broadcast.id }, uri: `portico://herald/broadcasts/${broadcast.id}` };
});

embedsAsItsResource('people.plan_onboarding embeds the person as their resource shows them', people, async (t, client) => {
  const person = await ok(t, client, 'people.create_person', { full_name: 'Nia Embed', email: 'nia.embed@acme.example' });
  return { prompt: 'people.plan_onboarding', args: { person_id: person.id }, uri: `portico://people/profiles/${person.id}` };
});

embedsAsItsResource('terrain.brief_current_step embeds the run as its resource shows it', terrain, async (t, client) => {
  const workflow = await ok(t, client, 'terrain.create_workflow', { name: 'Review C survey', steps: [{ name: 'Walk the field' }, { name: 'Write it up' }] });
  const run = await ok(t, client, 'terrain.start_workflow_run', { workflow_id: workflow.id, subject: 'Parcel 7' });
  return { prompt: 'terrain.brief_current_step', args: { run_id: run.id }, uri: `portico://terrain/runs/${run.id}` };
});

// ---------------------------------------------------------------- what the text states

mcpTest('people.plan_onboarding does not call cancelled tasks done', async (t, server) => {
  const { client, close } = await connect(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) });
  try {
    const person = await ok(t, client, 'people.create_person', { full_name: 'Otto Withdrawn', email: 'otto.withdrawn@acme.example' });
    const day = (days: number) => new Date(Math.floor(Date.now() / DAY) * DAY + days * DAY).toISOString().slice(0, 10);
    await ok(t, client, 'people.start_onboarding', { person_id: person.id, start_date: day(10) });
    const gone = await confirmed(t, client, 'people.offboard_person', { person_id: person.id, last_day: day(30), reason: 'Offer withdrawn' });
    t.true(gone.onboarding_tasks.length > 0 && gone.onboarding_tasks.every((task: { status: string }) => task.status === 'cancelled'), 'no task was done');
    const prompt = await client.getPrompt({ name: 'people.plan_onboarding', arguments: { person_id: person.id } });
    t.notRegex(texts(prompt.messages), /every task is done/);
    t.regex(texts(prompt.messages), new RegExp(`- no open task: 0 done, ${gone.onboarding_tasks.length} cancelled`));
  } finally {
    await close();
  }
});

mcpTest('harvest.intel_brief finds what harvest.search_intel finds for the same words (Unicode composition)', async (t, server) => {
  const { client, close } = await connect(server, { product: 'harvest', tenant: 'acme', scopes: Object.keys(harvest.scopes) });
  try {
    await ok(t, client, 'harvest.create_report', { subject: 'Réunion port closures', source: 'Harbour office', summary: 'The port closes for two weeks.', confidence: 'medium' });
    const decomposed = 'Re\u0301union';
    const tool = await ok(t, client, 'harvest.search_intel', { query: decomposed });
    t.is(tool.results.length, 1, 'search_intel finds it');
    const prompt = await client.getPrompt({ name: 'harvest.intel_brief', arguments: { topic: decomposed } });
    t.notRegex(texts(prompt.messages), /No intelligence report/);
    t.is(embedded(prompt.messages).length, tool.results.length);
  } finally {
    await close();
  }
});

// ---------------------------------------------------------------- cut lists

mcpTest('pawvault.prepare_vet_visit says when its list of vaccinations due is cut', async (t, server) => {
  const { client, close } = await connect(server, { product: 'pawvault', tenant: 'acme', scopes: Object.keys(pawvault.scopes) });
  try {
    const pet = await ok(t, client, 'pawvault.add_pet', { name: 'Pincushion', species: 'dog' });
    const today = Math.floor(Date.now() / DAY) * DAY;
    const tenantId = server.tenants.acme.id;
    // 501 different vaccines, each given a year ago and due again in the next 60 days.
    const rows = Array.from({ length: 501 }, (_, i) => ({
      id: randomUUID(), tenant_id: tenantId, pet_id: pet.id, vaccine: `Vaccine ${String(i).padStart(3, '0')}`, vaccine_key: `vaccine ${String(i).padStart(3, '0')}`,
      administered_on: today - 365 * DAY, due_on: today + (i % 50) * DAY, clinic: null, notes: null, created_at: Date.now(),
    }));
    for (let i = 0; i < rows.length; i += 100) await server.db('pawvault_vaccinations').insert(rows.slice(i, i + 100));
    const due = await ok(t, client, 'pawvault.list_due_vaccinations', { pet_id: pet.id, within_days: 60 });
    t.true(due.due_truncated, 'the tool says its list is cut');
    const prompt = await client.getPrompt({ name: 'pawvault.prepare_vet_visit', arguments: { pet_id: pet.id } });
    const section = /Vaccinations due or overdue:\n([\s\S]*?)\n\n/.exec(texts(prompt.messages))?.[1] ?? '';
    const listed = section.split('\n').filter((line) => line.startsWith('- Vaccine '));
    t.is(listed.length, 500);
    t.is(section.split('\n').at(-1), '- (500 of 501 listed)');
  } finally {
    await close();
  }
});

// ---------------------------------------------------------------- scopes

mcpTest('cavalier.draft_sow_from_deal tells a grant without cavalier.quotes.read nothing about the deal\'s quotes', async (t, server) => {
  const writer = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: Object.keys(cavalier.scopes) });
  const reader = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: ['cavalier.deals.read'] });
  try {
    const deal = () => ok(t, writer.client, 'cavalier.create_deal', { title: 'Quoted', customer: 'Initech', currency: 'EUR', value_minor: 500_000 });
    const quoted = await deal();
    await ok(t, writer.client, 'cavalier.create_quote', { deal_id: quoted.id, currency: 'EUR', line_items: [{ description: 'Work', quantity: 1, unit_price_minor: 500_000 }] });
    const bare = await deal();
    // The deal's resource (get_deal) shows such a grant neither the quotes nor how many there are.
    const shown = await read(reader.client, `portico://cavalier/deals/${quoted.id}`) as Record<string, unknown>;
    t.false('quotes' in shown || 'quotes_total' in shown);
    const instructions = async (dealId: string) => texts((await reader.client.getPrompt({ name: 'cavalier.draft_sow_from_deal', arguments: { deal_id: dealId } })).messages)
      .replaceAll(dealId, '<id>');
    t.is(await instructions(quoted.id), await instructions(bare.id), 'a deal with quotes reads as one without');
    t.regex(await instructions(bare.id), /This connection may not read quotes \(cavalier\.quotes\.read\)/);
  } finally {
    await writer.close();
    await reader.close();
  }
});
