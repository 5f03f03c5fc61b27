/**
 * What one audit record of an MCP call holds (SPEC.md 1.4 "records every invocation",
 * DESIGN.md §6): id, time, tenant, user, client, connection, product, kind, name, argument digest
 * and redacted arguments, outcome, duration, the request id the call was made under, and the hash
 * linking it to the tenant's previous record. One call of each path that writes a record: a write
 * tool (in its own transaction), a read tool, a resource read and a prompt (group-committed), a
 * destructive tool's first call, and a refusal before the tool ran.
 */
import { canonicalJson, recordHash, sha256Hex, type DbAuditRow } from '../../../db/audit.js';
import { auditOf, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';

mcpTest('each MCP call leaves one record with every field of the audit contract, chained to the one before', async (t, server) => {
  const client = 'spec-audit-client';
  const { token, connection } = await grant(server, {
    product: 'forge', tenant: 'acme', user: 'member@acme.example', clientId: client, scopes: ['forge.chat.read', 'forge.chat.write'],
  });
  const sessionId = await openSession(server, token, 'forge');
  const conversation = await server.db('forge_conversations').where({ tenant_id: server.tenants.acme.id }).orderBy('id').first('id');
  const calls: Array<{ request: string; method: string; params: Record<string, unknown>; kind: string; name: string; args: unknown; outcome: string }> = [
    { request: 'spec-audit-write', method: 'tools/call', params: { name: 'forge.create_conversation', arguments: { title: 'Audit fields' } }, kind: 'tool', name: 'forge.create_conversation', args: { title: 'Audit fields' }, outcome: 'ok' },
    { request: 'spec-audit-read', method: 'tools/call', params: { name: 'forge.list_conversations', arguments: { limit: 2 } }, kind: 'tool', name: 'forge.list_conversations', args: { limit: 2 }, outcome: 'ok' },
    { request: 'spec-audit-resource', method: 'resources/read', params: { uri: `portico://forge/conversations/${conversation.id}` }, kind: 'resource', name: 'forge.conversations', args: { uri: `portico://forge/conversations/${conversation.id}` }, outcome: 'ok' },
    { request: 'spec-audit-prompt', method: 'prompts/get', params: { name: 'forge.summarize_conversation', arguments: { conversation_id: conversation.id } }, kind: 'prompt', name: 'forge.summarize_conversation', args: { conversation_id: conversation.id }, outcome: 'ok' },
    { request: 'spec-audit-destroy', method: 'tools/call', params: { name: 'forge.delete_conversation', arguments: { conversation_id: conversation.id } }, kind: 'tool', name: 'forge.delete_conversation', args: { conversation_id: conversation.id }, outcome: 'confirmation_required' },
    { request: 'spec-audit-refused', method: 'tools/call', params: { name: 'forge.upload_document', arguments: { title: 'x', text: 'y' } }, kind: 'tool', name: 'forge.upload_document', args: { title: 'x', text: 'y' }, outcome: 'insufficient_scope' },
  ];
  const before = Date.now();
  for (const call of calls) {
    const response = await rawCall(server, token, 'forge', call.method, call.params, { sessionId, headers: { 'x-request-id': call.request } });
    t.true(response.status === 200 || response.status === 403, `${call.request}: ${response.text.slice(0, 200)}`);
  }
  const after = Date.now();

  const chain: DbAuditRow[] = await auditOf(server, 'acme');
  const records = chain.filter((r) => r.connection_id === connection.id);
  t.deepEqual(records.map((r) => r.request_id), calls.map((c) => c.request), 'one record per call, in order, under the request id it was made with');
  for (const [i, call] of calls.entries()) {
    const record = records[i];
    t.like(record, {
      chain: server.tenants.acme.id,
      tenant_id: server.tenants.acme.id,
      user_id: server.users['member@acme.example'],
      client_id: client,
      connection_id: connection.id,
      product: 'forge',
      kind: call.kind,
      name: call.name,
      outcome: call.outcome,
      request_id: call.request,
    }, call.request);
    t.regex(record.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, `${call.request}: id`);
    t.true(Number(record.time) >= before - 1_000 && Number(record.time) <= after + 1_000, `${call.request}: time`);
    t.true(Number.isInteger(Number(record.duration_ms)) && Number(record.duration_ms) >= 0, `${call.request}: duration`);
    t.is(record.args_digest, sha256Hex(canonicalJson(call.args)), `${call.request}: digest of the arguments`);
    t.deepEqual(JSON.parse(record.args_redacted ?? 'null'), call.args, `${call.request}: the arguments (nothing secret in them)`);
  }
  // The tenant's chain: each record names its predecessor's hash and its own hash covers it.
  for (const [i, record] of chain.entries()) {
    if (i > 0) t.is(record.prev_hash, chain[i - 1].hash, `seq ${record.seq} links to seq ${chain[i - 1].seq}`);
    t.is(Number(record.seq), Number(chain[0].seq) + i, 'seq has no gap');
    const { hash, ...rest } = record;
    t.is(hash, recordHash({ ...rest, seq: Number(rest.seq), time: Number(rest.time), duration_ms: rest.duration_ms === null ? null : Number(rest.duration_ms) }), `seq ${record.seq}: hash`);
  }
});
