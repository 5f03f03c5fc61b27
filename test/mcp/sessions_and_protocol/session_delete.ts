/**
 * A client's DELETE of its session while one of its calls is in flight cancels the call, whether
 * the host answers it itself or the SDK does: it ends as cancelled, changes nothing, and is
 * audited once.
 */
import test from 'ava';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { auditOf, grant, openSession, rawCall } from '../../helpers/mcp.js';
import { gate, startFaultServer } from '../../reliability/support.js';

for (const kind of databasesUnderTest()) {
  test(`DELETE of the session while its call runs cancels the call: nothing is written [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const door = gate('during-delete');
      const call = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: 'during-delete' } }, { sessionId, id: 1 });
      await door.entered;

      const deleted = await fetch(`${server.mcpUrl}/faultlab`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
      });
      const aborted = door.signal!.aborted;
      door.release();
      const response = await call;
      t.is(deleted.status, 200, 'the session is terminated');
      const body = response.body;
      const code = body?.result ? (body.result.isError ? body.result.structuredContent?.code : 'ok') : body?.error?.data?.code ?? 'no answer';
      t.is(code, 'timeout', `a call of a terminated session is cancelled (timeout: "nothing was changed"): ${response.text.slice(0, 300)}`);
      t.deepEqual(await server.markers('during-delete'), [], 'its effect did not persist');
      t.true(aborted, "the handler's signal told it to stop once its session was closed");
      const records = await auditOf(server, 'acme', { connection_id: connection.id, name: 'faultlab.write_marker' });
      t.is(records.length, 1, 'audited once');
    } finally {
      await server.close();
    }
  });
}
