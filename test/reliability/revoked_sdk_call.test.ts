/**
 * The host answers most calls itself; a few run in the MCP SDK's handlers (here a call reusing
 * the id of one still in flight, which the host leaves to the SDK). A call of either kind cut off
 * by its connection's revocation ends the same way (docs/security.md R4): `connection_revoked`,
 * audited so before it is answered (DESIGN.md §6), nothing written.
 */
import test from 'ava';
import { revokeConnection } from '../../db/grant_store.js';
import { databasesUnderTest } from '../helpers/db.js';
import { auditOf, grant, openSession, rawCall } from '../helpers/mcp.js';
import { gate, startFaultServer } from './support.js';

for (const kind of databasesUnderTest()) {
  test(`a call the SDK runs, cut off by its connection's revocation, is audited connection_revoked before it is answered [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.read', 'faultlab.markers.write'] });
      const sessionId = await openSession(server, token, 'faultlab');
      // A read holds id 7 on the host's own path (and, on SQLite, no writer), so the write with id 7 goes to the SDK.
      const held = gate('held-read');
      const read = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.read_markers', arguments: { name: 'held-read' } }, { sessionId, id: 7 });
      await held.entered;
      const door = gate('sdk-write');
      const call = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: 'sdk-write' } }, { sessionId, id: 7 });
      await door.entered;

      // What the console does: revoke (here from another connection: the write holds SQLite's writer), then tell every instance.
      const elsewhere = server.database.connect();
      await elsewhere.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' })).finally(() => elsewhere.destroy());
      await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
      const response = await call;
      // Read the moment the reply arrived: a record written after it, or as `timeout`, fails here.
      const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
      door.release();
      held.release();

      t.is(response.body?.error?.data?.code, 'connection_revoked', `the client is told why: ${response.text.slice(0, 300)}`);
      t.is(response.status, 401, 'its reply had not begun: the status is the token check’s');
      t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token", resource_metadata="[^"]+\/faultlab"/);
      t.deepEqual(records.map((r) => r.outcome), ['connection_revoked'], 'audited as it was answered, before the reply');
      t.true(door.signal!.aborted, "the handler's signal told it to stop");
      const direct = await read;
      t.is(direct.body?.error?.data?.code, 'connection_revoked', 'the host’s own call ends the same way');
      t.is(direct.status, 401);
      t.deepEqual(await server.markers('sdk-write'), [], 'nothing was written');
    } finally {
      await server.close();
    }
  });
}
