/**
 * The host answers most calls itself; a few run in the MCP SDK's handlers (a destructive tool
 * called by a client that declared elicitation: the person is asked through the SDK). A call of
 * either kind cut off by its connection's revocation ends the same way (docs/security.md R4):
 * `connection_revoked`, audited so before it is answered (DESIGN.md §6), nothing written.
 */
import test from 'ava';
import { revokeConnection } from '../../../db/grant_store.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { auditOf, connect, grant, openSession, rawCall } from '../../helpers/mcp.js';
import { gate, startFaultServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`a call the SDK runs, cut off by its connection's revocation, is audited connection_revoked before it is answered [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.read', 'faultlab.markers.write'] });
      // A read holds a call on the host's own path (and, on SQLite, no writer).
      const held = gate('held-read');
      const read = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.read_markers', arguments: { name: 'held-read' } }, { sessionId: await openSession(server, token, 'faultlab'), id: 7 });
      await held.entered;
      // A destructive call of a client with elicitation runs in the SDK: confirmed, it waits at its gate.
      const client = await connect(server, { product: 'faultlab', tenant: 'acme', scopes: [], token, elicit: () => ({ action: 'accept', content: { confirm: true } }) });
      const door = gate('sdk-write');
      const call = client.client.callTool({ name: 'faultlab.write_marker_confirmed', arguments: { name: 'sdk-write' } }).then(
        () => undefined, (error: unknown) => error);
      await door.entered;

      // What the console does: revoke (here from another connection: the write holds SQLite's writer), then tell every instance.
      const elsewhere = server.database.connect();
      await elsewhere.transaction((trx) => revokeConnection(trx, connection, { reason: 'test' })).finally(() => elsewhere.destroy());
      await server.events.publish({ type: 'connection.revoked', connectionId: connection.id, grantId: connection.grant_id });
      const refused = await call;
      // Read the moment the reply arrived: a record written after it, or as `timeout`, fails here.
      const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker_confirmed' });
      door.release();
      held.release();
      await client.close().catch(() => undefined);

      // Its reply had begun (the confirmation was asked on its stream): the JSON-RPC error says why.
      t.true(refused instanceof McpError, `the call failed: ${String(refused)}`);
      t.is(((refused as McpError).data as { code?: string } | undefined)?.code, 'connection_revoked', `the client is told why: ${String(refused)}`);
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
