/**
 * The console lists each connection's last use and call count (DESIGN.md §8). A call that was
 * refused because its connection was revoked while it ran did nothing: it is audited (with the
 * code it ended with), but it is not a use of the connection, and the console must not show the
 * connection as used after the moment it was revoked.
 */
import test from 'ava';
import { revokeConnection } from '../../../db/grant_store.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { auditOf, grant, openSession, rawCall } from '../../helpers/mcp.js';
import { gate, startFaultServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`a call refused because its connection was revoked while it ran is audited but not counted as a use [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const used = await rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: 'before' } }, { sessionId, id: 1 });
      t.false(Boolean(used.body?.result?.isError), used.text);
      const before = await server.db('connections').where({ id: connection.id }).first('call_count', 'last_used_at');
      t.is(Number(before.call_count), 1);

      const door = gate('while-revoked');
      const call = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: 'while-revoked' } }, { sessionId, id: 2 });
      await door.entered;
      // Revoked from elsewhere (another instance's console, the admin CLI), not yet heard here.
      const elsewhere = server.database.connect();
      await elsewhere.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' })).finally(() => elsewhere.destroy());
      door.release();
      const response = await call;
      const code = response.body?.result ? (response.body.result.isError ? response.body.result.structuredContent?.code : 'ok') : response.body?.error?.data?.code;
      t.is(code, 'connection_revoked', response.text.slice(0, 300));
      // As the token check answers the next request (DESIGN.md §7): the client learns its token is dead.
      t.is(response.status, 401);
      t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token", resource_metadata="[^"]+\/faultlab"/);
      t.deepEqual(await server.markers('while-revoked'), []);
      t.true((await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' })).some((r) => r.outcome !== 'ok'), 'the refused call is audited');

      const after = await server.db('connections').where({ id: connection.id }).first('call_count', 'last_used_at', 'revoked_at');
      t.truthy(after.revoked_at);
      t.is(Number(after.call_count), 1, 'the refused call is not counted as a use');
      t.true(Number(after.last_used_at) <= Number(after.revoked_at), `last used ${after.last_used_at} after it was revoked at ${after.revoked_at}`);
    } finally {
      await server.close();
    }
  });

  test(`a call cut off by its connection's revocation on this instance is audited but not counted as a use [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const door = gate('cut-off');
      const call = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: 'cut-off' } }, { sessionId, id: 1 });
      await door.entered;
      // What the console does: revoke, then tell every instance (its sessions close, the call is cancelled).
      const elsewhere = server.database.connect();
      await elsewhere.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' })).finally(() => elsewhere.destroy());
      await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
      door.release();
      const response = await call;
      t.is(response.body?.error?.data?.code, 'connection_revoked', `the client is told why: ${response.text.slice(0, 300)}`);
      // As the token check answers the next request (DESIGN.md §7): the client learns its token is dead.
      t.is(response.status, 401);
      t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token", resource_metadata="[^"]+\/faultlab"/);
      const next = await rawCall(server, token, 'faultlab', 'tools/list', {}, { id: 2 });
      t.is(next.status, 401);
      t.is(response.headers.get('www-authenticate'), next.headers.get('www-authenticate'), 'the challenge of the token check');
      t.deepEqual(await server.markers('cut-off'), []);
      t.true((await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' })).length > 0, 'the call is audited');

      const after = await server.db('connections').where({ id: connection.id }).first('call_count', 'last_used_at', 'revoked_at');
      t.is(Number(after.call_count), 0, 'the cut-off call is not counted as a use');
      t.is(after.last_used_at, null);
    } finally {
      await server.close();
    }
  });
}
