/**
 * Every page a read tool, resource or prompt reads is read in index order: the database finds a
 * tenant's first rows of the listing's order, and the rows after a cursor, without sorting all of
 * the tenant's rows first. A sort would cost each page time in proportion to everything the tenant
 * has, and on SQLite that time is spent on the event loop, holding every other request.
 *
 * Each tool is called as the catalog-wide tests call it (a sample of its arguments, ids of real
 * records), with `limit: 1` and then with the cursor it returned, so that the first page and a
 * later one are both seen; every statement with ORDER BY and LIMIT it ran is then explained.
 * SQLite: no temporary B-tree for the ORDER BY, not even for its last term. PostgreSQL, whose
 * planner would sort a table this small anyway: with a full sort made as costly as it can be
 * (`enable_sort` off), no Sort node is left, which holds only when an index gives the order. An
 * Incremental Sort may stay: the index gives the leading terms, and only rows that tie on them
 * are sorted, read no further than the page needs (people's history: `sequence` is unique per
 * person, which SQLite's planner sees and PostgreSQL's does not, so `id` never decides).
 * A filter with an index of its own must be searched through it on SQLite, whose planner has no
 * statistics to tell a rare value from a common one (PostgreSQL's has, and chooses by them).
 */
import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import pg from 'pg';
import { z } from 'zod';
import { PRODUCTS } from '../../../mcp/products/index.js';
import { readerOf, type Db } from '../../../db/connect.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { grant, openSession, rawCall, startMcpServer, type McpTestServer } from '../../helpers/mcp.js';
import { sample } from '../../helpers/schema_sample.js';

/**
 * Statements that sort by design. harvest.search_intel ranks the tenant's reports by how well they
 * match the words asked for: every report is read to be scored (a LIKE on its text), so sorting
 * the matches adds little to it.
 */
const RANKED = new Set(['harvest.search_intel']);

interface Statement {
  sql: string;
  bindings: readonly Knex.RawBinding[];
  /** The tool (with the filter it set, in parentheses), resource or prompt that ran it. */
  by: string;
}

/** Arguments for `input` that pass its schema, each `<entity>_id` naming one of acme's records. */
async function argumentsFor(server: McpTestServer, entities: Record<string, string> | undefined, input: z.ZodRawShape): Promise<Record<string, unknown>> {
  const args = sample(z.toJSONSchema(z.object(input)) as Record<string, unknown>) as Record<string, unknown>;
  for (const key of Object.keys(input).filter((k) => k.endsWith('_id') && k in args)) {
    const row = await server.db(entities![key.slice(0, -3)]).where({ tenant_id: server.tenants.acme.id }).first('id');
    args[key] = row.id;
  }
  return args;
}

/**
 * Calls every read tool (a listing twice: a first page and the next; and again with each filter
 * set), resource and prompt of the live catalog; returns the paged statements they ran.
 */
async function pagedStatements(t: ExecutionContext, server: McpTestServer): Promise<{ statements: Statement[]; listings: string[] }> {
  const statements = new Map<string, Statement>();
  let by = '';
  const watch = (query: { sql: string; bindings?: readonly Knex.RawBinding[] }) => {
    if (/\border by\b/i.test(query.sql) && /\blimit\b/i.test(query.sql) && !statements.has(query.sql)) statements.set(query.sql, { sql: query.sql, bindings: query.bindings ?? [], by });
  };
  const databases: Db[] = [...new Set([server.db, readerOf(server.db)])];
  for (const db of databases) db.on('query', watch);
  const listings: string[] = [];
  try {
    for (const product of PRODUCTS.filter((p) => p.status === 'live')) {
      const { token } = await grant(server, { product: product.id, tenant: 'acme', scopes: Object.keys(product.scopes) });
      const sessionId = await openSession(server, token, product.id);
      for (const tool of product.tools.filter((candidate) => candidate.scope.endsWith('.read') && !candidate.destructive)) {
        by = tool.name;
        const args = await argumentsFor(server, product.entities, tool.input);
        // A listing is also paged with each of its filters that takes a value from a list (or an id) set.
        const filtered: Record<string, unknown>[] = [];
        if ('cursor' in tool.input) {
          const properties = (z.toJSONSchema(z.object(tool.input)) as { properties: Record<string, { enum?: unknown[] }> }).properties;
          for (const [key, property] of Object.entries(properties)) {
            if (key in args) continue;
            if (property.enum) filtered.push({ ...args, [key]: property.enum[0] });
            else if (key.endsWith('_id') && product.entities?.[key.slice(0, -3)]) filtered.push({ ...args, ...(await argumentsFor(server, product.entities, { [key]: z.string() })) });
          }
        }
        for (const [i, each] of [args, ...filtered].entries()) {
          by = i === 0 ? tool.name : `${tool.name} (${Object.keys(each).filter((key) => !(key in args)).join(', ')})`;
          const pages = 'cursor' in tool.input ? 2 : 1;
          let cursor: string | undefined;
          for (let page = 0; page < pages; page++) {
            const paged = 'limit' in tool.input ? { ...each, limit: 1, ...(cursor ? { cursor } : {}) } : each;
            const response = await rawCall(server, token, product.id, 'tools/call', { name: tool.name, arguments: paged }, { sessionId });
            t.is(response.status, 200);
            const result = response.body?.result as { isError?: boolean; structuredContent?: { next_cursor?: string | null } } | undefined;
            t.falsy(result?.isError, `${by}: ${JSON.stringify(response.body).slice(0, 300)}`);
            cursor = result?.structuredContent?.next_cursor ?? undefined;
            if (!cursor) break;
            if (page === 0 && i === 0) listings.push(tool.name);
          }
        }
      }
      for (const resource of product.resources) {
        by = `${product.id} resource ${resource.collection}`;
        const singular = resource.collection.replace(/ies$/, 'y').replace(/s$/, '');
        const table = product.entities?.[singular] ?? Object.values(product.entities ?? {}).find((name) => name === `${product.id}_${resource.collection}`);
        t.truthy(table, `${by}: no table`);
        const row = await server.db(table!).where({ tenant_id: server.tenants.acme.id }).first('id');
        const response = await rawCall(server, token, product.id, 'resources/read', { uri: `portico://${product.id}/${resource.collection}/${row.id}` }, { sessionId });
        t.truthy(response.body?.result, `${by}: ${JSON.stringify(response.body).slice(0, 300)}`);
      }
      for (const prompt of product.prompts) {
        by = prompt.name;
        const response = await rawCall(server, token, product.id, 'prompts/get', { name: prompt.name, arguments: await argumentsFor(server, product.entities, prompt.args) }, { sessionId });
        t.truthy(response.body?.result, `${prompt.name}: ${JSON.stringify(response.body).slice(0, 300)}`);
      }
    }
  } finally {
    for (const db of databases) db.off('query', watch);
  }
  return { statements: [...statements.values()], listings };
}

/**
 * SQLite, from one EXPLAIN of the statement: the temporary B-trees its plan sorts the ORDER BY in
 * (none when an index gives the order), and, for a listing filtered on a column its table has an
 * index for (after `tenant_id`, or first), whether it searches that index, so that a value few
 * rows hold is found without reading the tenant's other rows.
 */
async function sqliteProblems(db: Db, statement: Statement): Promise<string[]> {
  const plan = (await db.raw(`explain query plan ${statement.sql}`, statement.bindings)) as Array<{ detail: string }>;
  const problems = plan.map((step) => step.detail).filter((detail) => /TEMP B-TREE FOR .*ORDER BY/.test(detail));
  const filter = /\((\w+)\)$/.exec(statement.by)?.[1];
  const table = /from [`"](\w+)[`"]/.exec(statement.sql)?.[1];
  if (!filter || !table) return problems;
  const indexes = (await db.raw(`pragma index_list('${table}')`)) as Array<{ name: string }>;
  const own: string[] = [];
  for (const { name } of indexes) {
    const columns = ((await db.raw(`pragma index_info('${name}')`)) as Array<{ name: string }>).map((c) => c.name);
    if (columns[0] === filter || (columns[0] === 'tenant_id' && columns[1] === filter)) own.push(name);
  }
  const details = plan.map((step) => step.detail).join('; ');
  // Reading one record's children (a scan's findings) in order is bounded by that record.
  const ofOneRecord = new RegExp(`SEARCH ${table} USING INDEX \\w+ \\((?!tenant_id)\\w+_id=\\?`).test(details);
  const searched = own.some((name) => details.includes(`USING INDEX ${name} `) && details.includes(`${filter}=?`));
  if (own.length && !ofOneRecord && !searched) problems.push(`searches ${details}, not ${own.join(' or ')}`);
  return problems;
}

interface PlanNode {
  'Node Type': string;
  'Sort Key'?: string[];
  Plans?: PlanNode[];
}

/** PostgreSQL: the Sort nodes of its plan with full sorts switched off. */
async function postgresSorts(client: pg.Client, statement: Statement): Promise<string[]> {
  let n = 0;
  const text = statement.sql.includes('$1') ? statement.sql : statement.sql.replace(/\?/g, () => `$${++n}`);
  const [{ 'QUERY PLAN': [{ Plan }] }] = (await client.query(`explain (format json) ${text}`, statement.bindings as unknown[])).rows;
  const sorts: string[] = [];
  const walk = (node: PlanNode) => {
    if (node['Node Type'] === 'Sort') sorts.push(`${node['Node Type']} by ${node['Sort Key']?.join(', ')}`);
    node.Plans?.forEach(walk);
  };
  walk(Plan);
  return sorts;
}

for (const kind of databasesUnderTest()) {
  test(`every page a read tool, resource or prompt reads comes in index order, with no sort of the tenant's rows [${kind}]`, async (t) => {
    t.timeout(180_000);
    const server = await startMcpServer(kind);
    const client = kind === 'postgres' ? new pg.Client({ connectionString: server.database.url }) : undefined;
    try {
      const { statements, listings } = await pagedStatements(t, server);
      // Every listing ran a paged statement; those the demo gives a second page (most) ran their cursor's too.
      const pageable = PRODUCTS.filter((p) => p.status === 'live').flatMap((p) => p.tools.filter((tool) => 'cursor' in tool.input).map((tool) => tool.name));
      t.deepEqual(pageable.filter((name) => !statements.some((statement) => statement.by === name)), [], 'listings that ran no paged statement');
      t.true(statements.some((statement) => statement.by.startsWith('cavalier.list_deals (')), 'filtered listings were paged too');
      t.true(listings.length >= 14, `listings paged: ${listings.join(', ')}`);
      t.true(statements.length >= pageable.length + listings.length, `${statements.length} statements`);
      if (client) {
        await client.connect();
        await client.query('set enable_sort = off; set enable_seqscan = off');
      }
      const sorted: string[] = [];
      for (const statement of statements.filter((candidate) => !RANKED.has(candidate.by))) {
        const sorts = client ? await postgresSorts(client, statement) : await sqliteProblems(server.db, statement);
        if (sorts.length) sorted.push(`${statement.by}: ${sorts.join('; ')}\n    ${statement.sql}`);
      }
      t.deepEqual(sorted, [], `statements sorting the tenant's rows:\n${sorted.join('\n')}`);
      t.log(`${statements.length} paged statements read in index order; ${listings.length} listings paged to a second page`);
    } finally {
      await client?.end().catch(() => undefined);
      await server.close();
    }
  });
}
