/**
 * The MCP host's principal cache (mcp/principal_cache.ts) must never let a revoked token through:
 * revocation of a connection or of one access token drops it at once, a lookup that raced a
 * revocation is not kept, and while the relay to other instances is down nothing is cached.
 */
import test from 'ava';
import { revokeConnection, type Principal } from '../../db/grant_store.js';
import { PrincipalCache } from '../../mcp/principal_cache.js';
import { DEMO_PASSWORD, grant, mcpTest, openSession, rawPost } from '../helpers/mcp.js';
import { authorizeWithPassword } from '../helpers/oauth.js';
import { within } from '../helpers/poll.js';

const principal = (connectionId: string, expiresAt = Date.now() + 60_000) => ({ connectionId, expiresAt }) as unknown as Principal;

test('a connection’s entries are found without walking the cache, and the index follows every way an entry leaves', (t) => {
  const cache = new PrincipalCache({ maxEntries: 4, maxAgeMs: 60_000 });
  cache.set('a1', principal('A'), 'a1-hash', cache.mark());
  cache.set('a2', principal('A'), 'a2-hash', cache.mark());
  cache.set('b1', principal('B'), 'b1-hash', cache.mark());
  cache.set('c1', principal('C', 10), 'c1-hash', cache.mark(), 0);
  t.deepEqual(cache.connectionIds(0).sort(), ['A', 'B', 'C']);

  t.is(cache.get('c1', 10), undefined, 'expired');
  cache.set('d1', principal('D'), 'd1-hash', cache.mark());
  cache.set('e1', principal('E'), 'e1-hash', cache.mark()); // full: the oldest (a1) is evicted
  t.is(cache.get('a1'), undefined);
  cache.dropToken('b1-hash');
  t.deepEqual(cache.connectionIds().sort(), ['A', 'D', 'E'], 'expiry, eviction and a token revocation all leave the index');

  cache.dropConnection('A');
  t.is(cache.get('a2'), undefined, 'the rest of A');
  t.truthy(cache.get('d1'));
  t.truthy(cache.get('e1'));
  t.deepEqual(cache.connectionIds().sort(), ['D', 'E']);
  cache.set('d1', principal('D'), 'd1-hash', cache.mark()); // stored again under the same key
  cache.dropConnection('D');
  t.is(cache.get('d1'), undefined);
  cache.reset(true);
  t.deepEqual(cache.connectionIds(), []);
  t.is(cache.size, 0);
});

test('a lookup that started before an invalidation is not stored; entries expire with the token and the age bound', (t) => {
  const cache = new PrincipalCache({ maxEntries: 3, maxAgeMs: 1_000 });
  const mark = cache.mark();
  cache.dropConnection('c1'); // a revocation lands while the database answer is on its way
  cache.set('k1', principal('c1'), 'k1-hash', mark);
  t.is(cache.get('k1'), undefined);

  cache.set('k1', principal('c1'), 'k1-hash', cache.mark(), 0);
  t.truthy(cache.get('k1', 999));
  t.is(cache.get('k1', 1_000), undefined, 'at most maxAgeMs');
  cache.set('k2', principal('c2', 500), 'k2-hash', cache.mark(), 0);
  t.is(cache.get('k2', 500), undefined, 'never past the token expiry');

  for (const key of ['a', 'b', 'c', 'd']) cache.set(key, principal(key), `${key}-hash`, cache.mark());
  t.is(cache.size, 3, 'bounded');
  cache.reset(false);
  cache.set('e', principal('e'), 'e-hash', cache.mark());
  t.is(cache.get('e'), undefined, 'nothing is cached while disabled');
  cache.reset(true);
  cache.set('e', principal('e'), 'e-hash', cache.mark());
  t.truthy(cache.get('e'));
  cache.dropToken('x-hash');
  t.truthy(cache.get('e'), 'another token revoked: this one stays');
  cache.set('r', principal('x'), 'x-hash', cache.mark());
  cache.dropToken('x-hash');
  t.is(cache.get('r'), undefined, 'the revoked token is dropped, whatever its key');
  t.truthy(cache.get('e'));
});

const call = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: { limit: 1 } } });

mcpTest('a connection revoked in the database and announced on the bus is refused on the very next call, cache or not', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  for (let i = 1; i <= 3; i += 1) t.is((await rawPost(server, 'forge', { token, sessionId, body: call(i) }, i)).status, 200);
  await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' }));
  await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
  const after = await rawPost(server, 'forge', { token, sessionId, body: call(4) }, 4);
  t.is(after.status, 401);
  t.is(after.body.error.data.code, 'connection_revoked');
});

mcpTest('an access token revoked at /oauth/revoke is refused on the next call', async (t, server) => {
  const resource = `${server.mcpUrl}/forge`;
  const tokens = await authorizeWithPassword(server.url, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, tokens.accessToken, 'forge');
  for (let i = 1; i <= 3; i += 1) t.is((await rawPost(server, 'forge', { token: tokens.accessToken, sessionId, body: call(i) }, i)).status, 200);
  const revoked = await fetch(`${server.url}/oauth/revoke`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: tokens.accessToken, token_type_hint: 'access_token', client_id: tokens.clientId }).toString(),
  });
  t.is(revoked.status, 200);
  const after = await rawPost(server, 'forge', { token: tokens.accessToken, sessionId, body: call(4) }, 4);
  t.is(after.status, 401);
  t.is(after.body.error.data.code, 'invalid_token');
});

mcpTest('an unannounced revocation is seen once the relay reports events may be lost: nothing is served from the cache then', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, token, 'forge');
  t.is((await rawPost(server, 'forge', { token, sessionId, body: call(1) }, 1)).status, 200);
  // A revocation whose event never arrives (as when another instance's NOTIFY is lost) ...
  await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' }));
  // ... is not seen while the cache holds the principal (this is why every revocation is announced) ...
  t.is((await rawPost(server, 'forge', { token, sessionId, body: call(2) }, 2)).status, 200);
  // ... and the relay reporting its LISTEN connection lost empties and disables the cache.
  server.events.relayState(false);
  const after = await rawPost(server, 'forge', { token, sessionId, body: call(3) }, 3);
  t.is(after.status, 401);
  t.is(after.body.error.data.code, 'connection_revoked');
}, { revokedSweepMs: 3_600_000 }); // the sweep, every second by default, would otherwise find the revocation first when it runs between the two calls

test('the connections listed for the revocation sweep are those of live entries: expired ones leave the cache then', (t) => {
  const cache = new PrincipalCache({ maxEntries: 10, maxAgeMs: 1_000 });
  cache.set('a1', principal('A'), 'a1-hash', cache.mark(), 0);
  cache.set('b1', principal('B', 500), 'b1-hash', cache.mark(), 0);
  t.deepEqual(cache.connectionIds(100).sort(), ['A', 'B']);
  t.deepEqual(cache.connectionIds(500), ['A'], 'past the token expiry');
  t.is(cache.size, 1);
  t.deepEqual(cache.connectionIds(1_000), [], 'past the age bound');
  t.is(cache.size, 0);
});

/** Whether the stream ends (its reader reads to the end) within `ms`. */
async function endsWithin(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<boolean> {
  const ended = (async () => {
    while (!(await reader.read()).done);
    return true;
  })();
  return (await within(ms, ended)) === true;
}

const revokeAt = (server: { url: string }, tokens: { accessToken: string; clientId: string }) => fetch(`${server.url}/oauth/revoke`, {
  method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ token: tokens.accessToken, token_type_hint: 'access_token', client_id: tokens.clientId }).toString(),
});

mcpTest('an access token revoked at /oauth/revoke closes the GET stream it opened, before the answer; the session and other tokens stay', async (t, server) => {
  const resource = `${server.mcpUrl}/forge`;
  const login = { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes: ['forge.chat.read'] };
  const [revoked, kept] = [await authorizeWithPassword(server.url, login), await authorizeWithPassword(server.url, login)];
  const streamOf = async (token: string) => {
    const sessionId = await openSession(server, token, 'forge');
    const response = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
    t.is(response.status, 200);
    return { sessionId, reader: response.body!.getReader() };
  };
  const [a, b] = [await streamOf(revoked.accessToken), await streamOf(kept.accessToken)];
  // The event reaches every instance before the answer leaves: here, a relay that takes a while.
  let relayed = false;
  server.events.relay = async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    relayed = true;
  };
  t.is((await revokeAt(server, revoked)).status, 200);
  t.true(relayed, 'the answer waited for the event');
  t.true(await endsWithin(a.reader, 1_000), 'the revoked token’s stream closed');
  t.false(await endsWithin(b.reader, 300), 'the other token’s stream is open');
  // The session lives on with another token of the connection's.
  t.is((await rawPost(server, 'forge', { token: kept.accessToken, sessionId: b.sessionId, body: call(1) }, 1)).status, 200);
  await b.reader.cancel();
});

mcpTest('a token revoked where the event never arrives is refused within the revocation sweep, its stream closed', async (t, server) => {
  const resource = `${server.mcpUrl}/forge`;
  const tokens = await authorizeWithPassword(server.url, { email: 'admin@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes: ['forge.chat.read'] });
  const sessionId = await openSession(server, tokens.accessToken, 'forge');
  t.is((await rawPost(server, 'forge', { token: tokens.accessToken, sessionId, body: call(1) }, 1)).status, 200, 'cached now');
  const stream = await fetch(`${server.mcpUrl}/forge`, { headers: { authorization: `Bearer ${tokens.accessToken}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  t.is(stream.status, 200);
  // Revoked by another instance whose NOTIFY was lost: the row is gone, no event comes.
  const { hashTokenId } = await import('../../db/grant_store.js');
  t.is(await server.db('oidc_payloads').where({ model: 'AccessToken', id: hashTokenId(tokens.accessToken) }).delete(), 1);
  t.true(await endsWithin(stream.body!.getReader(), 3_000), 'the stream closed');
  const after = await rawPost(server, 'forge', { token: tokens.accessToken, sessionId, body: call(2) }, 2);
  t.is(after.status, 401);
  t.is(after.body.error.data.code, 'invalid_token');
}, { revokedSweepMs: 100 });
