/**
 * A roadmap product serves nothing until it ships (SPEC part 1.5: midas "its tools appear only when
 * the public-API surface ships"; docs/mcp.md: "A roadmap server (midas) accepts sessions and lists no
 * tools, resources or prompts"). midas.test.ts holds its tools to that; its resource and its prompt,
 * which read the tenant's endpoints and usage, were not, and were served before shipping when the
 * pipeline's liveness check for them was removed.
 */
import { setSurfaceStatus } from '../../../db/surfaces.js';
import { midas } from '../../../mcp/products/midas/index.js';
import { auditOf, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

mcpTest('roadmap midas lists and serves no resource and no prompt until it ships, whatever the grant’s scopes', async (t, server) => {
  const endpoint = await server.db('midas_endpoints').where({ tenant_id: server.tenants.acme.id }).first('id');
  t.truthy(endpoint, 'the demo data has an acme endpoint');
  const uri = `${server.config.resourceUriScheme}://midas/endpoints/${endpoint.id}`;
  const { token, connection } = await grant(server, { product: 'midas', tenant: 'acme', scopes: Object.keys(midas.scopes) });
  const sessionId = await openSession(server, token, 'midas');

  const templates = await rawCall(server, token, 'midas', 'resources/templates/list', {}, { sessionId });
  t.deepEqual(templates.body?.result?.resourceTemplates, []);
  const prompts = await rawCall(server, token, 'midas', 'prompts/list', {}, { sessionId });
  t.deepEqual(prompts.body?.result?.prompts, []);

  const read = await rawCall(server, token, 'midas', 'resources/read', { uri }, { sessionId });
  t.is(read.body?.error?.data?.code, 'not_found', read.text.slice(0, 300));
  t.is(read.body?.result, undefined, 'nothing of the endpoint is returned');
  const prompt = await rawCall(server, token, 'midas', 'prompts/get', { name: 'midas.usage_report', arguments: {} }, { sessionId });
  t.is(prompt.body?.error?.data?.code, 'not_found', prompt.text.slice(0, 300));
  t.is(prompt.body?.result, undefined);
  t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => [r.kind, r.outcome]), [['resource', 'not_found'], ['prompt', 'not_found']]);

  // Shipped, the same requests are served: the refusals above were the roadmap's.
  await setSurfaceStatus(server.db, 'midas', 'live');
  await server.events.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
  const served = await rawCall(server, token, 'midas', 'resources/read', { uri }, { sessionId });
  t.is(served.body?.result?.contents?.[0]?.uri, uri, served.text.slice(0, 300));
  const report = await rawCall(server, token, 'midas', 'prompts/get', { name: 'midas.usage_report', arguments: {} }, { sessionId });
  t.true(Array.isArray(report.body?.result?.messages), report.text.slice(0, 300));
});
