/**
 * Arguments at the edges of what the products accept, answered the same on both databases:
 * date-times on days that do not exist are refused (not rolled over into the next month), forged
 * cursors are invalid_arguments (never internal), a subject whose lower-cased copy is longer than
 * itself is stored, and case-insensitive filters fold non-ASCII capitals on SQLite as PostgreSQL does.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connect, mcpTest } from '../helpers/mcp.js';

// ---- date-times

const nextYear = new Date().getUTCFullYear() + 1;

mcpTest('herald.schedule_broadcast refuses a send_at on a day that does not exist', async (t, server) => {
  const { client, close } = await connect(server, { product: 'herald', tenant: 'acme', scopes: ['herald.broadcasts.read', 'herald.broadcasts.write'] });
  try {
    const created = await client.callTool({ name: 'herald.create_broadcast', arguments: { title: 'Feb 30', body: 'Nothing', audience: 'everyone' } });
    const id = (created.structuredContent as any).id;
    const sendAt = `${nextYear}-02-30T09:00:00Z`;
    let result: any;
    const error = await client.callTool({ name: 'herald.schedule_broadcast', arguments: { broadcast_id: id, send_at: sendAt } }).then((r) => {
      result = r;
      return undefined;
    }, (e: unknown) => e);
    const row = await server.db('herald_broadcasts').where({ id }).first();
    t.is(row.status, 'draft', `the broadcast was scheduled for ${new Date(Number(row.scheduled_for)).toISOString()} (asked ${sendAt}): ${JSON.stringify(result?.structuredContent)}`);
    t.true(error instanceof McpError);
    t.is((error as any)?.data?.code, 'invalid_arguments');
    t.is((error as any)?.data?.field, 'send_at');
  } finally {
    await close();
  }
});

mcpTest('harvest.create_report refuses an observed_at on a day that does not exist', async (t, server) => {
  const { client, close } = await connect(server, { product: 'harvest', tenant: 'acme', scopes: ['harvest.intel.read', 'harvest.intel.write'] });
  try {
    const error = await client.callTool({
      name: 'harvest.create_report',
      arguments: { subject: 'Rollover', source: 'review', summary: 'A day that does not exist', observed_at: '2025-04-31T10:00:00Z' },
    }).then((r) => (r.structuredContent as any), (e: unknown) => e);
    t.true(error instanceof McpError, `accepted: observed_at stored as ${(error as any)?.observed_at}`);
    t.is((error as any)?.data?.field, 'observed_at');
    t.falsy(await server.db('harvest_reports').where({ subject: 'Rollover' }).first(), 'nothing written');
  } finally {
    await close();
  }
});

// ---- cursors

const forged = (key: number, id: string) => Buffer.from(JSON.stringify([key, id])).toString('base64url');

mcpTest('aegis.list_findings refuses a forged cursor with invalid_arguments, never internal', async (t, server) => {
  const { client, close } = await connect(server, { product: 'aegis', tenant: 'acme', scopes: ['aegis.findings.read'] });
  try {
    const outcome = await client.callTool({ name: 'aegis.list_findings', arguments: { cursor: forged(3_000_000_000, 'ffffffff-ffff-ffff-ffff-ffffffffffff') } })
      .then((r) => ({ code: r.isError ? (r.structuredContent as any)?.code : 'ok' }), (e: McpError) => ({ code: (e as any).data?.code as string }));
    t.is(outcome.code, 'invalid_arguments');
  } finally {
    await close();
  }
});

mcpTest('a cursor whose id holds U+0000 is refused with invalid_arguments, never internal (harvest, forge)', async (t, server) => {
  for (const [product, scopes, tool] of [
    ['harvest', ['harvest.lots.read'], 'harvest.list_lots'],
    ['forge', ['forge.chat.read'], 'forge.list_conversations'],
  ] as Array<[string, string[], string]>) {
    const { client, close } = await connect(server, { product, tenant: 'acme', scopes });
    try {
      const outcome = await client.callTool({ name: tool, arguments: { cursor: forged(1, 'a\u0000b') } })
        .then((r) => ({ code: r.isError ? (r.structuredContent as any)?.code : 'ok' }), (e: McpError) => ({ code: (e as any).data?.code as string }));
      t.is(outcome.code, 'invalid_arguments', tool);
    } finally {
      await close();
    }
  }
});

// ---- a subject longer once lower-cased

// 150 characters: well within the documented 200, e.g. a Turkish place name repeated.
const SUBJECT = `İzmir İstanbul İnegöl ${'İ'.repeat(128)}`;

mcpTest('harvest.create_report accepts any subject of at most 200 characters (Turkish capitals included)', async (t, server) => {
  t.true(SUBJECT.length <= 200);
  const { client, close } = await connect(server, { product: 'harvest', tenant: 'acme', scopes: ['harvest.intel.read', 'harvest.intel.write'] });
  try {
    const outcome = await client.callTool({
      name: 'harvest.create_report',
      arguments: { subject: SUBJECT, source: 'Port authority', summary: 'Turkish subject' },
    }).then((r) => ({ ok: !r.isError, value: r.structuredContent as any }), (e: McpError) => ({ ok: false, value: { code: (e as any).data?.code, message: e.message } }));
    t.true(outcome.ok, `create_report failed: ${JSON.stringify(outcome.value)}`);
    t.is((await server.db('harvest_reports').where({ id: outcome.value.id }).first('subject')).subject, SUBJECT);
  } finally {
    await close();
  }
});

mcpTest('harvest.update_report accepts any subject of at most 200 characters (Turkish capitals included)', async (t, server) => {
  const { client, close } = await connect(server, { product: 'harvest', tenant: 'acme', scopes: ['harvest.intel.read', 'harvest.intel.write'] });
  try {
    const report = await server.db('harvest_reports').where({ tenant_id: server.tenants.acme.id }).first('id');
    const outcome = await client.callTool({ name: 'harvest.update_report', arguments: { report_id: report.id, subject: SUBJECT } })
      .then((r) => ({ ok: !r.isError, value: r.structuredContent as any }), (e: McpError) => ({ ok: false, value: { code: (e as any).data?.code, message: e.message } }));
    t.true(outcome.ok, `update_report failed: ${JSON.stringify(outcome.value)}`);
    t.is((await server.db('harvest_reports').where({ id: report.id }).first('subject')).subject, SUBJECT);
  } finally {
    await close();
  }
});

// ---- case-insensitive filters

mcpTest('people.list_people department filter is case-insensitive for non-ASCII department names', async (t, server) => {
  const { client, close } = await connect(server, { product: 'people', tenant: 'acme', scopes: ['people.profiles.read', 'people.profiles.write'] });
  try {
    const created = await client.callTool({ name: 'people.create_person', arguments: { full_name: 'Zoé Öztürk', email: 'zoe.ozturk@acme.example', department: 'ÉTUDES' } });
    t.falsy(created.isError, JSON.stringify(created.structuredContent));
    const same = await client.callTool({ name: 'people.list_people', arguments: { department: 'ÉTUDES' } });
    t.is((same.structuredContent as any).people.length, 1, 'the department as stored');
    const lower = await client.callTool({ name: 'people.list_people', arguments: { department: 'études' } });
    t.is((lower.structuredContent as any).people.length, 1, 'the department in lower case');
    const query = await client.callTool({ name: 'people.list_people', arguments: { query: 'ÖZTÜRK' } });
    t.is((query.structuredContent as any).people.length, 1, 'the name in upper case');
  } finally {
    await close();
  }
});

mcpTest('cavalier.list_deals customer filter is case-insensitive for non-ASCII customer names', async (t, server) => {
  const { client, close } = await connect(server, { product: 'cavalier', tenant: 'acme', scopes: ['cavalier.deals.read', 'cavalier.deals.write'] });
  try {
    const created = await client.callTool({ name: 'cavalier.create_deal', arguments: { title: 'Ölpumpen', customer: 'ÖLWERKE GMBH', currency: 'EUR', value_minor: 100_00 } });
    t.falsy(created.isError, JSON.stringify(created.structuredContent));
    const found = await client.callTool({ name: 'cavalier.list_deals', arguments: { customer: 'ölwerke' } });
    t.is((found.structuredContent as any).deals.length, 1, '"ölwerke" finds "ÖLWERKE GMBH"');
  } finally {
    await close();
  }
});

// Names whose capitals PostgreSQL's lower() folds otherwise than JavaScript's ('İ' to 'i' rather
// than 'i' + U+0307, a final 'Σ' to 'σ' rather than 'ς'): found by the exact spelling, by a
// lower-case one (either fold's, or typed plainly) and by the first word, on both databases.
const FOLDED_NAMES = ['İSTANBUL TEKSTİL', 'ΟΔΟΣ ΑΕ'];
const spellings = (name: string) => [name, name.toLowerCase(), name === 'İSTANBUL TEKSTİL' ? 'istanbul tekstil' : 'οδοσ αε', name.split(' ')[0]];

mcpTest('case-insensitive filters find Turkish and Greek names by their exact, lower-case and partial spellings (cavalier, harvest, people)', async (t, server) => {
  const session = async (product: string, scopes: string[]) => connect(server, { product, tenant: 'acme', scopes });
  const cavalier = await session('cavalier', ['cavalier.deals.read', 'cavalier.deals.write', 'cavalier.quotes.read', 'cavalier.quotes.write']);
  const harvest = await session('harvest', ['harvest.lots.read', 'harvest.lots.write', 'harvest.intel.read', 'harvest.intel.write']);
  const people = await session('people', ['people.profiles.read', 'people.profiles.write']);
  const call = async (client: typeof cavalier.client, name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    t.falsy(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`);
    return result.structuredContent as any;
  };
  try {
    for (const [index, name] of FOLDED_NAMES.entries()) {
      await call(cavalier.client, 'cavalier.create_deal', { title: 'Fabric', customer: name, currency: 'EUR', value_minor: 100 });
      await call(cavalier.client, 'cavalier.create_quote', { customer: name, currency: 'EUR', line_items: [{ description: 'Fabric', quantity: 1, unit_price_minor: 100 }] });
      await call(harvest.client, 'harvest.create_lot', { item: name, condition: 'good', quantity: 1, currency: 'EUR', estimated_value_minor: 100 });
      await call(harvest.client, 'harvest.create_report', { subject: 'Port traffic', source: name, summary: 'Seen at the port.' });
      await call(people.client, 'people.create_person', { full_name: name, email: `folded${index}@acme.example`, department: name });
      for (const spelling of spellings(name)) {
        const label = `${JSON.stringify(spelling)} finds ${JSON.stringify(name)}`;
        t.is((await call(cavalier.client, 'cavalier.list_deals', { customer: spelling })).deals.length, 1, `list_deals: ${label}`);
        t.is((await call(cavalier.client, 'cavalier.list_quotes', { customer: spelling })).quotes.length, 1, `list_quotes: ${label}`);
        t.is((await call(harvest.client, 'harvest.list_lots', { item: spelling })).lots.length, 1, `list_lots: ${label}`);
        t.is((await call(harvest.client, 'harvest.list_reports', { source: spelling })).reports.length, 1, `list_reports: ${label}`);
        t.is((await call(people.client, 'people.list_people', { query: spelling })).people.length, 1, `list_people query: ${label}`);
      }
      for (const spelling of spellings(name).slice(0, 3)) {
        t.is((await call(people.client, 'people.list_people', { department: spelling })).people.length, 1, `list_people department: ${JSON.stringify(spelling)}`);
      }
    }
  } finally {
    await Promise.all([cavalier.close(), harvest.close(), people.close()]);
  }
});
