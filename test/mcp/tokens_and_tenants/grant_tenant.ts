/**
 * The tenant of a call is the grant's, not the person's (SPEC.md 5.5 "checked … against the
 * tenant of the grant", DESIGN.md §3): a person who belongs to both organizations, connected for
 * one, is refused the other's records with 403 forbidden_cross_tenant by tool, resource and
 * prompt, although the same person may read them through a connection made for the other one.
 * The catalog-wide tenancy tests call as a person of one organization only, so a check of the
 * person's memberships instead of the grant's tenant would pass them.
 */
import { auditOf, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

const ALL_CHAT = ['forge.chat.read', 'forge.chat.write'];

mcpTest('a person in two organizations, connected for one, is refused the other one’s records by tool, resource and prompt', async (t, server) => {
  const person = 'multi@example.com';
  const memberships = await server.db('memberships').where({ user_id: server.users[person] }).pluck('tenant_id');
  t.deepEqual([...memberships].sort(), [server.tenants.acme.id, server.tenants.globex.id].sort(), 'the demo person belongs to both');
  const theirs = await server.db('forge_conversations').where({ tenant_id: server.tenants.globex.id }).orderBy('id').first('id', 'title');

  // Control: through a connection made for globex, the person reads it.
  const atGlobex = await grant(server, { product: 'forge', tenant: 'globex', user: person, scopes: ALL_CHAT });
  const allowed = await rawCall(server, atGlobex.token, 'forge', 'tools/call', { name: 'forge.get_conversation', arguments: { conversation_id: theirs.id } });
  t.is(allowed.status, 200);
  t.not(allowed.body?.result?.isError, true, allowed.text.slice(0, 300));

  const atAcme = await grant(server, { product: 'forge', tenant: 'acme', user: person, scopes: ALL_CHAT });
  const sessionId = await openSession(server, atAcme.token, 'forge');
  const refused = [
    ['tools/call', { name: 'forge.get_conversation', arguments: { conversation_id: theirs.id } }],
    ['tools/call', { name: 'forge.add_message', arguments: { conversation_id: theirs.id, content: 'from the wrong organization' } }],
    ['tools/call', { name: 'forge.delete_conversation', arguments: { conversation_id: theirs.id } }],
    ['resources/read', { uri: `portico://forge/conversations/${theirs.id}` }],
    ['prompts/get', { name: 'forge.summarize_conversation', arguments: { conversation_id: theirs.id } }],
  ] as const;
  for (const [i, [method, params]] of refused.entries()) {
    const response = await rawCall(server, atAcme.token, 'forge', method, params, { sessionId, id: i + 1 });
    const label = `${method} ${'name' in params ? params.name : params.uri}`;
    t.is(response.status, 403, `${label}: ${response.text.slice(0, 300)}`);
    t.is(response.body?.error?.data?.code, 'forbidden_cross_tenant', label);
    t.false(response.text.includes(theirs.title), `${label}: nothing of the record is shown`);
  }
  t.is((await server.db('mcp_confirmations').where({ connection_id: atAcme.connection.id })).length, 0, 'no confirmation is offered for the other organization’s record');
  t.is((await server.db('forge_messages').where({ conversation_id: theirs.id, content: 'from the wrong organization' })).length, 0);
  t.truthy(await server.db('forge_conversations').where({ id: theirs.id }).first(), 'the record is still there');

  const listed = await rawCall(server, atAcme.token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: { limit: 100 } }, { sessionId, id: 10 });
  const ids = (listed.body?.result?.structuredContent?.conversations ?? []).map((c: { id: string }) => c.id);
  t.true(ids.length > 0);
  t.false(ids.includes(theirs.id), 'the acme connection lists acme’s conversations only');

  const records = await auditOf(server, 'acme', { connection_id: atAcme.connection.id, outcome: 'forbidden_cross_tenant' });
  t.is(records.length, refused.length, 'each refusal is in the log of the grant’s organization');
  t.is((await auditOf(server, 'globex', { connection_id: atAcme.connection.id })).length, 0);
});
