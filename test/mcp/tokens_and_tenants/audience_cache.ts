/**
 * The audience binding holds after a token was accepted (DESIGN.md §4: a token for /forge is
 * invalid at /aegis). Tokens accepted once are served from the principal cache
 * (mcp/principal_cache.ts); the other audience tests present a token at the wrong product before
 * it was ever accepted, so a cache that remembered a principal by token alone, whatever resource
 * it was checked for, passed them and let a forge token open sessions at aegis.
 */
import { authenticateBearer, hashTokenId } from '../../../db/grant_store.js';
import { isAppError } from '../../../shared/errors.js';
import { grant, mcpTest, openSession, rawCall, rawPost } from '../../helpers/mcp.js';

mcpTest('a token accepted at its own product is still refused at another product, however often it was used', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  for (let i = 0; i < 3; i++) {
    const own = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.list_conversations', arguments: {} });
    t.is(own.status, 200, own.text);
    t.falsy(own.body.error, own.text);
  }

  const initialize = await rawPost(server, 'aegis', {
    token,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }),
  }, 1);
  t.is(initialize.status, 401, initialize.text);
  t.is(initialize.body.error?.data?.code, 'invalid_token');
  t.is(initialize.headers.get('mcp-session-id'), null, 'no session is opened at another product');

  const call = await rawCall(server, token, 'aegis', 'tools/call', { name: 'aegis.list_scans', arguments: {} });
  t.is(call.status, 401, call.text);
  t.is(call.body.error?.data?.code, 'invalid_token');

  // and the token still works where it belongs
  const sessionId = await openSession(server, token, 'forge');
  const again = await rawCall(server, token, 'forge', 'tools/list', {}, { sessionId });
  t.is(again.status, 200, again.text);
});

mcpTest('the token’s audience, its connection’s resource, a sender constraint and the connection’s scopes are each checked on their own', async (t, server) => {
  const forge = `${server.mcpUrl}/forge`;
  const aegis = `${server.mcpUrl}/aegis`;
  const refused = async (token: string, resource: string, label: string) => {
    const error = await authenticateBearer(server.db, token, resource).catch((e: unknown) => e);
    t.true(isAppError(error) && error.code === 'invalid_token', `${label}: ${String(error)}`);
  };
  const payloadOf = async (token: string) => JSON.parse((await server.db('oidc_payloads').where({ model: 'AccessToken', id: hashTokenId(token) }).first('payload')).payload);
  const setPayload = (token: string, payload: unknown) => server.db('oidc_payloads').where({ model: 'AccessToken', id: hashTokenId(token) }).update({ payload: JSON.stringify(payload) });

  // The audience names aegis, the connection forge: refused at aegis by the connection's resource.
  const a = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  await setPayload(a.token, { ...(await payloadOf(a.token)), aud: aegis });
  await refused(a.token, aegis, 'audience aegis, connection forge');

  // The connection names aegis, the audience forge: refused at aegis by the audience.
  const b = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  await server.db('connections').where({ id: b.connection.id }).update({ resource: aegis });
  await refused(b.token, aegis, 'audience forge, connection aegis');

  // A sender-constrained (DPoP- or mTLS-bound) token is never taken as a plain bearer token.
  for (const constraint of [{ cnf: { jkt: 'x' }, jkt: 'x' }, { 'x5t#S256': 'x' }]) {
    const c = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
    t.truthy(await authenticateBearer(server.db, c.token, forge));
    await setPayload(c.token, { ...(await payloadOf(c.token)), ...constraint });
    await refused(c.token, forge, JSON.stringify(constraint));
  }

  // A token naming more scopes than its connection holds gets the connection's only.
  const d = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  await setPayload(d.token, { ...(await payloadOf(d.token)), scope: 'forge.chat.read forge.chat.write' });
  t.deepEqual([...(await authenticateBearer(server.db, d.token, forge)).scopes], ['forge.chat.read']);
  const write = await rawCall(server, d.token, 'forge', 'tools/call', { name: 'forge.create_conversation', arguments: { title: 'Should not exist' } });
  t.is(write.status, 403, write.text);
  t.is(write.body.error?.data?.code, 'insufficient_scope');
});
