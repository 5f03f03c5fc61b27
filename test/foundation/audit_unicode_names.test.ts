/**
 * What a caller writes into a record (the name of an unknown tool or prompt) must not be
 * able to break the tenant's hash chain. A lone UTF-16 surrogate cannot be stored as UTF-8 by
 * either database: the stored text differs from the hashed one and `audit verify` then reports
 * the tenant's own, untampered log as tampered with.
 */
import { auditOf, grant, mcpTest, openSession, rawPost } from '../helpers/mcp.js';
import { verifyStoredChain } from '../../db/audit.js';

const names = {
  'a lone surrogate': 'forge.\ud800nope',
  'a surrogate pair cut at 200 code units': `forge.${'x'.repeat(193)}\u{1F600}tail`,
};

for (const [what, name] of Object.entries(names)) {
  mcpTest(`an unknown tool named with ${what} is audited and the chain still verifies`, async (t, server) => {
    const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
    const sessionId = await openSession(server, token, 'forge');
    // JSON.stringify writes a lone surrogate as the escape \ud800, which JSON.parse turns back into one.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {} } });
    const response = await rawPost(server, 'forge', { token, sessionId, body }, 7);
    t.is(response.body.error?.data?.code, 'unknown_tool', response.text);
    const records = (await auditOf(server, 'acme')).filter((r) => r.outcome === 'unknown_tool');
    t.is(records.length, 1, 'the refusal is audited once');
    const verified = await verifyStoredChain(server.db, server.tenants.acme.id);
    t.deepEqual(verified.first_broken, undefined, 'the untampered chain verifies');
    t.true(verified.ok);
  });
}

mcpTest('an unknown prompt named with a lone surrogate is audited and the chain still verifies', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const body = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { name: 'forge.\udfffsummary' } });
  const response = await rawPost(server, 'forge', { token, sessionId, body }, 8);
  t.truthy(response.body.error, response.text);
  const verified = await verifyStoredChain(server.db, server.tenants.acme.id);
  t.deepEqual(verified.first_broken, undefined, 'the untampered chain verifies');
});

mcpTest('an unknown tool or prompt whose name holds U+0000 is refused as such and audited, not a 500 without a record', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  const calls = [
    { method: 'tools/call', params: { name: 'forge.\u0000list', arguments: {} }, code: 'unknown_tool' },
    { method: 'prompts/get', params: { name: 'forge.\u0000summary' }, code: 'not_found' },
  ];
  for (const [i, call] of calls.entries()) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: call.method, params: call.params });
    const response = await rawPost(server, 'forge', { token, sessionId, body }, 10 + i);
    t.is(response.status, 200, response.text);
    t.is(response.body.error?.data?.code, call.code, response.text);
  }
  const records = (await auditOf(server, 'acme')).filter((r) => r.kind === 'tool' || r.kind === 'prompt');
  t.deepEqual(records.map((r) => [r.kind, r.outcome]), [['tool', 'unknown_tool'], ['prompt', 'not_found']]);
  t.true((await verifyStoredChain(server.db, server.tenants.acme.id)).ok);
});
