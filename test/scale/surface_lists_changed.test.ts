/**
 * `surface ship midas` / `surface unship midas` with MCP sessions open on two instances: each
 * session is told of every list that changed. midas brings a prompt (midas.usage_report) and
 * resource templates as well as tools; a client that listed prompts before the change must be
 * told to list them again, or it never offers midas.usage_report after the ship (and still offers
 * it, to be refused, after the unship).
 */
import test from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { defaultMounts } from '../../mounts.js';
import { EventBus } from '../../shared/events.js';
import { runAdmin } from '../../scripts/admin.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { issueAccessToken } from '../helpers/grants.js';
import { connectCountingChanges, seedDemo } from '../helpers/mcp.js';
import { startTestServer } from '../helpers/server.js';

const pgTest = databasesUnderTest().includes('postgres') ? test.serial : test.skip;

async function waitFor(condition: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

pgTest('surface ship and unship tell the sessions on every instance that tools, prompts and resource templates changed [postgres]', async (t) => {
  t.timeout(120_000);
  const database = await createTestDatabase('postgres');
  const a = await startTestServer('postgres', { database, mounts: defaultMounts({ events: new EventBus() }) });
  const b = await startTestServer('postgres', { database, mounts: defaultMounts({ events: new EventBus() }), env: { PUBLIC_AUTH_URL: a.url } });
  const clients: Client[] = [];
  try {
    const db = a.portico.context.db;
    await seedDemo(db);
    const tenant = await db('tenants').where({ slug: 'acme' }).first('id');
    const user = await db('users').where({ email: 'admin@acme.example' }).first('id');
    const { token } = await issueAccessToken(db, { tenantId: tenant.id, userId: user.id, product: 'midas', resource: `${a.config.mcpUrl}/midas`, scopes: ['midas.api.read', 'midas.api.write'] });
    const cli = (...argv: string[]) => runAdmin(argv, { out: () => undefined, err: () => undefined }, { DATABASE_URL: database.url });

    const sessions = await Promise.all([a, b].map(async (server) => {
      const session = await connectCountingChanges(`${server.url}/mcp/midas`, token);
      clients.push(session.client);
      return session;
    }));
    for (const { client } of sessions) {
      t.deepEqual((await client.listPrompts()).prompts, []);
      t.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
      t.like(client.getServerCapabilities(), { prompts: { listChanged: true }, resources: { listChanged: true } }, 'the prompt and resource lists may change, and the server says so');
    }
    // The GET streams are up before anything is announced.
    await Promise.all(sessions.map((session) => session.streaming));

    t.is(await cli('surface', 'ship', 'midas'), 0);
    for (const [i, { client, told }] of sessions.entries()) {
      t.true(await waitFor(() => told.tools === 1), `instance ${i}: tools/list_changed (${JSON.stringify(told)})`);
      t.true(await waitFor(() => told.prompts === 1), `instance ${i}: prompts/list_changed (${JSON.stringify(told)})`);
      t.true(await waitFor(() => told.resources === 1), `instance ${i}: resources/list_changed (${JSON.stringify(told)})`);
      t.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['midas.usage_report']);
      t.true((await client.listResourceTemplates()).resourceTemplates.length > 0);
    }

    t.is(await cli('surface', 'unship', 'midas'), 0);
    for (const [i, { client, told }] of sessions.entries()) {
      t.true(await waitFor(() => told.tools === 2 && told.prompts === 2 && told.resources === 2), `instance ${i}: every list change announced again (${JSON.stringify(told)})`);
      t.deepEqual((await client.listPrompts()).prompts, []);
      await t.throwsAsync(client.getPrompt({ name: 'midas.usage_report', arguments: {} }), { message: /no prompt named/ });
    }
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    await b.stop();
    await a.stop();
    await database.drop();
  }
});
