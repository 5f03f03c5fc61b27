/** harvest through the MCP pipeline with a real SDK client, on every database. */
import { harvest } from '../../mcp/products/harvest/index.js';
import {
  assertConfirmationFlow, assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertRefusedUnconfirmed, assertToolError, callConfirmed,
  okConfirmed, productSuite,
} from './product_suite.js';

const each = productSuite('harvest');
const ALL = Object.keys(harvest.scopes);
const LOTS = ['harvest.lots.read', 'harvest.lots.write'];
const INTEL = ['harvest.intel.read', 'harvest.intel.write'];
const unique = (prefix: string) => `${prefix}${Math.random().toString(36).slice(2, 8)}`;

each('every harvest tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of harvest.tools) {
    await assertInsufficientScope(t, env, 'harvest', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

each('lots: create, get, list with filters, update with status rules', async (t, env) => {
  const item = unique('Forklift batteries ');
  const lot = await env.ok(t, 'acme', LOTS, 'harvest.create_lot', {
    item, condition: 'fair', quantity: 6, currency: 'USD', estimated_value_minor: 240_050, location: 'Yard C',
  });
  t.like(lot, { item, condition: 'fair', quantity: 6, estimated_value_minor: 240_050, estimated_value: '2400.50 USD', status: 'available', location: 'Yard C', description: null });
  t.deepEqual(lot.next_statuses, ['reserved', 'sold', 'scrapped']);
  t.is((await env.ok(t, 'acme', LOTS, 'harvest.get_lot', { lot_id: lot.id })).item, item);

  const byItem = await env.ok(t, 'acme', LOTS, 'harvest.list_lots', { item: item.toUpperCase() });
  t.deepEqual(byItem.lots.map((l: any) => l.id), [lot.id]);
  const byCondition = await env.ok(t, 'acme', LOTS, 'harvest.list_lots', { condition: 'fair', status: 'available' });
  t.true(byCondition.lots.some((l: any) => l.id === lot.id));
  t.true(byCondition.lots.every((l: any) => l.condition === 'fair' && l.status === 'available'));

  const edited = await env.ok(t, 'acme', LOTS, 'harvest.update_lot', { lot_id: lot.id, estimated_value_minor: 199_900, location: 'Yard C', status: 'reserved' });
  t.deepEqual(edited.changed.sort(), ['estimated_value_minor', 'status']);
  t.like(edited, { estimated_value: '1999.00 USD', status: 'reserved' });
  const refused = await assertRefusedUnconfirmed(t, env, 'acme', LOTS, 'harvest.close_lot', { lot_id: lot.id, outcome: 'scrapped' }, 'conflict');
  t.regex(refused.message, /reserved and cannot move to scrapped: it can move to available or sold/);
  await okConfirmed(t, env, 'acme', LOTS, 'harvest.close_lot', { lot_id: lot.id, outcome: 'sold' });
  const final = await assertToolError(t, env, 'acme', LOTS, 'harvest.update_lot', { lot_id: lot.id, location: 'Elsewhere' }, 'conflict');
  t.regex(final.message, /sold, which is final/);
  t.is((await env.ok(t, 'acme', LOTS, 'harvest.get_lot', { lot_id: lot.id })).location, 'Yard C');

  await assertInvalidArguments(t, env, 'acme', LOTS, 'harvest.create_lot', { item: 'x', condition: 'broken', quantity: 1, currency: 'USD', estimated_value_minor: 1 }, 'condition');
  await assertInvalidArguments(t, env, 'acme', LOTS, 'harvest.create_lot', { item: 'x', condition: 'good', quantity: 0, currency: 'USD', estimated_value_minor: 1 }, 'quantity');
  await assertInvalidArguments(t, env, 'acme', LOTS, 'harvest.create_lot', { item: 'x'.repeat(201), condition: 'good', quantity: 1, currency: 'USD', estimated_value_minor: 1 }, 'item');
  await assertInvalidArguments(t, env, 'acme', LOTS, 'harvest.update_lot', { lot_id: lot.id, status: 'lost' }, 'status');
});

each('a lot\'s currency changes only together with its value in the new currency', async (t, env) => {
  const lot = await env.ok(t, 'acme', LOTS, 'harvest.create_lot', { item: unique('Brass fittings '), condition: 'good', quantity: 40, currency: 'EUR', estimated_value_minor: 10_000 });
  t.is(lot.estimated_value, '100.00 EUR');
  const bare = await t.throwsAsync((await env.client('acme', LOTS)).callTool({ name: 'harvest.update_lot', arguments: { lot_id: lot.id, currency: 'JPY' } }));
  t.regex(bare!.message, /from EUR to JPY/);
  await assertInvalidArguments(t, env, 'acme', LOTS, 'harvest.update_lot', { lot_id: lot.id, currency: 'JPY', location: 'Dock 4' }, 'estimated_value_minor');
  t.like(await env.ok(t, 'acme', LOTS, 'harvest.get_lot', { lot_id: lot.id }), { currency: 'EUR', estimated_value_minor: 10_000, estimated_value: '100.00 EUR', location: null });

  // Naming the currency it already has converts nothing, so the value may stay out.
  const same = await env.ok(t, 'acme', LOTS, 'harvest.update_lot', { lot_id: lot.id, currency: 'EUR', location: 'Dock 4' });
  t.deepEqual(same.changed, ['location']);
  const converted = await env.ok(t, 'acme', LOTS, 'harvest.update_lot', { lot_id: lot.id, currency: 'JPY', estimated_value_minor: 16_300 });
  t.deepEqual(converted.changed.sort(), ['currency', 'estimated_value_minor']);
  t.like(converted, { currency: 'JPY', estimated_value_minor: 16_300, estimated_value: '16300 JPY' });
});

each('selling or scrapping a lot is final, so it asks for confirmation; update_lot refuses those moves', async (t, env) => {
  t.true(harvest.tools.find((tool) => tool.name === 'harvest.close_lot')?.destructive === true, 'harvest.close_lot is destructive');
  t.true(harvest.tools.find((tool) => tool.name === 'harvest.update_lot')?.destructive === false, 'harvest.update_lot only makes changes that leave the lot open');
  const lot = await env.ok(t, 'globex', LOTS, 'harvest.create_lot', { item: unique('Steel drums '), condition: 'poor', quantity: 12, currency: 'EUR', estimated_value_minor: 2_400 });
  await assertInvalidArguments(t, env, 'globex', LOTS, 'harvest.update_lot', { lot_id: lot.id, status: 'scrapped' }, 'status');
  await assertInvalidArguments(t, env, 'globex', LOTS, 'harvest.update_lot', { lot_id: lot.id, status: 'sold' }, 'status');
  const scrapped = await callConfirmed(t, env, 'globex', LOTS, 'harvest.close_lot', { lot_id: lot.id, outcome: 'scrapped' }, {
    sentence: new RegExp(`Salvage lot ${lot.id} will be marked scrapped`),
    unchanged: async () => {
      t.is((await env.server.db('harvest_lots').where({ id: lot.id }).first()).status, 'available');
    },
  });
  t.false(scrapped.isError, JSON.stringify(scrapped.structured));
  t.like(scrapped.structured, { id: lot.id, status: 'scrapped', previous_status: 'available', next_statuses: [] });
  // Nobody is asked to confirm a move out of a final state.
  const again = await assertRefusedUnconfirmed(t, env, 'globex', LOTS, 'harvest.close_lot', { lot_id: lot.id, outcome: 'sold' }, 'conflict');
  t.regex(again.message, /scrapped, which is final/);
  t.is((await env.server.db('harvest_lots').where({ id: lot.id }).first()).status, 'scrapped');
});

each('delete_lot follows the confirmation protocol', async (t, env) => {
  const lot = await env.ok(t, 'globex', LOTS, 'harvest.create_lot', { item: 'Old generator', condition: 'scrap', quantity: 1, currency: 'EUR', estimated_value_minor: 5000 });
  const done = await assertConfirmationFlow(t, env, 'globex', LOTS, 'harvest.delete_lot', { lot_id: lot.id }, {
    sentence: new RegExp(`Salvage lot ${lot.id} will be permanently deleted`),
    unchanged: async () => {
      t.truthy(await env.server.db('harvest_lots').where({ id: lot.id }).first());
    },
  });
  t.like(done, { deleted: true, id: lot.id, item: 'Old generator' });
  t.falsy(await env.server.db('harvest_lots').where({ id: lot.id }).first());
});

each('reports: create with normalised tags, list by tag, source and confidence, update', async (t, env) => {
  const tag = unique('tag-');
  const report = await env.ok(t, 'acme', INTEL, 'harvest.create_report', {
    subject: 'Port auction', source: 'Harbour master', summary: 'Containers of scrap steel go to auction in March.',
    confidence: 'high', tags: [tag.toUpperCase(), ` ${tag} `, 'Steel'], observed_at: '2026-10-01T08:30:00+02:00',
  });
  t.deepEqual(report.tags, [tag, 'steel']);
  t.is(report.observed_at, '2026-10-01T06:30:00.000Z');
  const byTag = await env.ok(t, 'acme', INTEL, 'harvest.list_reports', { tag: tag.toUpperCase() });
  t.deepEqual(byTag.reports.map((r: any) => r.id), [report.id]);
  // An exact tag, not a part of one.
  t.deepEqual((await env.ok(t, 'acme', INTEL, 'harvest.list_reports', { tag: tag.slice(0, -1) })).reports, []);
  const bySource = await env.ok(t, 'acme', INTEL, 'harvest.list_reports', { source: 'HARBOUR', confidence: 'high' });
  t.true(bySource.reports.some((r: any) => r.id === report.id));

  const defaults = await env.ok(t, 'acme', INTEL, 'harvest.create_report', { subject: 'Tip', source: 'Driver', summary: 'Heard something.' });
  t.like(defaults, { confidence: 'medium', tags: [] });

  const updated = await env.ok(t, 'acme', INTEL, 'harvest.update_report', { report_id: report.id, tags: ['auctions'], summary: 'Moved to April.' });
  t.deepEqual(updated.changed.sort(), ['summary', 'tags']);
  t.deepEqual(updated.tags, ['auctions']);
  const read = await env.ok(t, 'acme', INTEL, 'harvest.get_report', { report_id: report.id });
  t.like(read, { summary: 'Moved to April.', subject: 'Port auction', confidence: 'high' });
  t.deepEqual((await env.ok(t, 'acme', INTEL, 'harvest.list_reports', { tag })).reports, []);

  await assertInvalidArguments(t, env, 'acme', INTEL, 'harvest.create_report', { subject: 's', source: 's', summary: 's', tags: ['a|b'] }, 'tags.0');
  await assertInvalidArguments(t, env, 'acme', INTEL, 'harvest.create_report', { subject: 's', source: 's', summary: 's', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags');
  await assertInvalidArguments(t, env, 'acme', INTEL, 'harvest.create_report', { subject: 's', source: 's', summary: 's', observed_at: '2026-10-01' }, 'observed_at');
  await assertInvalidArguments(t, env, 'acme', INTEL, 'harvest.create_report', { subject: 's', source: 's', summary: 's', confidence: 'certain' }, 'confidence');
});

each('search_intel matches case-insensitively in subject, tags and summary, and ranks the best first', async (t, env) => {
  const word = unique('kx');
  const metal = unique('cu');
  const create = (args: Record<string, unknown>) => env.ok(t, 'globex', INTEL, 'harvest.create_report', { source: 'Test desk', ...args });
  const summaryOnly = await create({ subject: 'Market notes', summary: `The term ${word} appears in passing.` });
  const tagOnly = await create({ subject: 'Unrelated', summary: 'Nothing here.', tags: [word] });
  const subjectBoth = await create({ subject: `${word.toUpperCase()} ${metal}`, summary: 'No body match.' });
  const everywhere = await create({ subject: `${word} ${metal} prices`, summary: `${word} ${metal} prices rose sharply.`, tags: [metal] });
  // "kx…cu…" written as one word contains both words: it matches both, in the summary only.
  const decoy = await create({ subject: 'Decoy', summary: `${word}${metal} is one word, not two.` });

  const result = await env.ok(t, 'globex', ['harvest.intel.read'], 'harvest.search_intel', { query: `${word.toUpperCase()} ${metal}` });
  t.deepEqual(result.results.map((r: any) => [r.id, r.matched_terms, r.score]), [
    [everywhere.id, 2, 15], // word: subject 3 + summary 1; metal: subject 3 + exact tag 4 + summary 1; phrase: subject 2 + summary 1
    [subjectBoth.id, 2, 8], // word 3 + metal 3 + phrase in subject 2
    [decoy.id, 2, 2], // both words, summary only: more words matched ranks above a higher score with fewer
    [tagOnly.id, 1, 4],
    [summaryOnly.id, 1, 1],
  ]);
  t.is(result.results[0].uri, `portico://harvest/reports/${everywhere.id}`);

  const limited = await env.ok(t, 'globex', ['harvest.intel.read'], 'harvest.search_intel', { query: `${word} ${metal}`, limit: 2 });
  t.deepEqual(limited.results.map((r: any) => r.id), [everywhere.id, subjectBoth.id]);

  // LIKE wildcards in the query match themselves; other tenants' reports are never searched.
  t.deepEqual((await env.ok(t, 'globex', ['harvest.intel.read'], 'harvest.search_intel', { query: '%' })).results, []);
  t.deepEqual((await env.ok(t, 'globex', ['harvest.intel.read'], 'harvest.search_intel', { query: '_' })).results, []);
  t.deepEqual((await env.ok(t, 'acme', ['harvest.intel.read'], 'harvest.search_intel', { query: word })).results, []);

  // Case folding beyond ASCII is the same on every database.
  const umlaut = await create({ subject: `ÜBERSEE ${word}`, summary: 'Ölpreise steigen.' });
  const folded = await env.ok(t, 'globex', ['harvest.intel.read'], 'harvest.search_intel', { query: 'übersee ölpreise' });
  t.is(folded.results[0].id, umlaut.id);
  t.is(folded.results[0].matched_terms, 2);

  await assertInvalidArguments(t, env, 'globex', ['harvest.intel.read'], 'harvest.search_intel', { query: '' }, 'query');
  await assertInvalidArguments(t, env, 'globex', ['harvest.intel.read'], 'harvest.search_intel', { query: 'x', limit: 51 }, 'limit');
});

each('lot and report ids of another tenant are forbidden_cross_tenant', async (t, env) => {
  const foreignLot = (await env.ok(t, 'globex', LOTS, 'harvest.list_lots', {})).lots.at(-1).id;
  const foreignReport = (await env.ok(t, 'globex', INTEL, 'harvest.list_reports', {})).reports.at(-1).id;
  await assertCrossTenant(t, env, 'harvest', 'acme', LOTS, 'harvest.get_lot', { lot_id: foreignLot });
  await assertCrossTenant(t, env, 'harvest', 'acme', LOTS, 'harvest.update_lot', { lot_id: foreignLot, status: 'reserved' });
  await assertCrossTenant(t, env, 'harvest', 'acme', LOTS, 'harvest.close_lot', { lot_id: foreignLot, outcome: 'scrapped', confirmed: true });
  await assertCrossTenant(t, env, 'harvest', 'acme', LOTS, 'harvest.delete_lot', { lot_id: foreignLot, confirmed: true });
  await assertCrossTenant(t, env, 'harvest', 'acme', INTEL, 'harvest.get_report', { report_id: foreignReport });
  await assertCrossTenant(t, env, 'harvest', 'acme', INTEL, 'harvest.update_report', { report_id: foreignReport, summary: 'overwritten' });
  const lot = await env.server.db('harvest_lots').where({ id: foreignLot }).first();
  t.not(lot.status, 'scrapped');
  t.not(lot.status, 'reserved');
  t.not((await env.server.db('harvest_reports').where({ id: foreignReport }).first()).summary, 'overwritten');
  await assertToolError(t, env, 'acme', LOTS, 'harvest.get_lot', { lot_id: 'not-an-id' }, 'not_found');
});

each('lot and report resources and the intel_brief and appraise_lot prompts work end to end', async (t, env) => {
  const client = await env.client('acme', ALL);
  const lots = await env.ok(t, 'acme', ALL, 'harvest.list_lots', { item: 'anvils' });
  const anvils = lots.lots[0];
  t.like(anvils, { item: 'Surplus anvils, 100 lb', quantity: 36, estimated_value: '4320.00 USD' });
  const lot = JSON.parse(((await client.readResource({ uri: `portico://harvest/lots/${anvils.id}` })).contents[0] as { text: string }).text);
  t.is(lot.estimated_value_minor, 432_000);
  const search = await env.ok(t, 'acme', ALL, 'harvest.search_intel', { query: 'copper prices' });
  t.is(search.results[0].subject, 'Copper scrap prices');
  const report = JSON.parse(((await client.readResource({ uri: `portico://harvest/reports/${search.results[0].id}` })).contents[0] as { text: string }).text);
  t.deepEqual(report.tags, ['copper', 'pricing']);

  const brief = await client.getPrompt({ name: 'harvest.intel_brief', arguments: { topic: 'copper prices' } });
  const first = brief.messages[0].content as { type: string; resource: { uri: string; text: string } };
  t.is(first.type, 'resource');
  t.is(first.resource.uri, `portico://harvest/reports/${search.results[0].id}`);
  t.regex((brief.messages.at(-1)!.content as { text: string }).text, /Write a brief on "copper prices"/);
  const nothing = await client.getPrompt({ name: 'harvest.intel_brief', arguments: { topic: unique('nothing') } });
  t.regex((nothing.messages[0].content as { text: string }).text, /No intelligence report of this organization mentions/);
  // A topic without a word is refused naming the prompt's own argument, not search_intel's.
  const wordless = await t.throwsAsync(client.getPrompt({ name: 'harvest.intel_brief', arguments: { topic: '|' } })) as Error & { data?: { code?: string; field?: string } };
  t.like(wordless.data, { code: 'invalid_arguments', field: 'topic' });
  t.regex(wordless.message, /topic: needs at least one word/);

  const appraise = await client.getPrompt({ name: 'harvest.appraise_lot', arguments: { lot_id: anvils.id } });
  t.regex((appraise.messages[1].content as { text: string }).text, /Surplus anvils, 100 lb" \(36 units, condition like_new, estimated at 4320\.00 USD/);
  const foreignLot = (await env.ok(t, 'globex', LOTS, 'harvest.list_lots', {})).lots[0].id;
  await t.throwsAsync(client.getPrompt({ name: 'harvest.appraise_lot', arguments: { lot_id: foreignLot } }), { message: /another organization/ });
});
