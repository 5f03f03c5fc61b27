/**
 * terrain workflow names are unique whatever their case: "Site survey" refuses "SITE SURVEY",
 * including when two differently spelled creates race each other, on every database.
 */
import { connect, mcpTest } from '../helpers/mcp.js';
import { call, connections, unexpected } from './parallel_support.js';

const SCOPES = ['terrain.workflows.read', 'terrain.workflows.write'];
const STEPS = [{ name: 'Walk the site' }];

mcpTest('a workflow name that differs from an existing one only in case is refused as a conflict, and nothing is written', async (t, server) => {
  const { client, close } = await connect(server, { product: 'terrain', tenant: 'acme', scopes: SCOPES });
  try {
    const before = await server.db('terrain_workflows').where({ tenant_id: server.tenants.acme.id }).count({ n: '*' }).first();
    for (const name of ['site survey', 'SITE SURVEY', 'Site Survey']) {
      const refused = await call(client, 'terrain.create_workflow', { name, steps: STEPS });
      t.is(refused.code, 'conflict', name);
      t.regex(refused.value.message, new RegExp(`a workflow named "${name}" already exists`));
    }
    // Final sigma and the dotted capital I fold as the database folds them: one name each.
    t.true((await call(client, 'terrain.create_workflow', { name: 'ΟΔΟΣ İnspection', steps: STEPS })).ok);
    t.is((await call(client, 'terrain.create_workflow', { name: 'οδοσ inspection', steps: STEPS })).code, 'conflict');
    const after = await server.db('terrain_workflows').where({ tenant_id: server.tenants.acme.id }).count({ n: '*' }).first();
    t.is(Number(after?.n), Number(before?.n) + 1);
    // Another organization's names are its own.
    const { client: globex, close: closeGlobex } = await connect(server, { product: 'terrain', tenant: 'globex', scopes: SCOPES });
    try {
      t.true((await call(globex, 'terrain.create_workflow', { name: 'odos İNSPECTION', steps: STEPS })).ok);
    } finally {
      await closeGlobex();
    }
  } finally {
    await close();
  }
});

mcpTest('two creates of one name in different case at the same time: one workflow, the other a conflict', async (t, server) => {
  const clients = await connections(server, { product: 'terrain', tenant: 'globex', scopes: SCOPES }, 2);
  try {
    for (let round = 0; round < 5; round += 1) {
      const names = [`Bridge audit ${round}`, `BRIDGE AUDIT ${round}`];
      const outcomes = await Promise.all(clients.map(({ client }, i) => call(client, 'terrain.create_workflow', { name: names[i], steps: STEPS })));
      t.deepEqual(unexpected(outcomes, ['conflict']), [], `round ${round}`);
      t.is(outcomes.filter((o) => o.ok).length, 1, `round ${round}: ${JSON.stringify(outcomes)}`);
      const stored = await server.db('terrain_workflows').where({ tenant_id: server.tenants.globex.id }).whereIn('name', names);
      t.is(stored.length, 1, `round ${round}`);
    }
  } finally {
    for (const { close } of clients) await close();
  }
});
