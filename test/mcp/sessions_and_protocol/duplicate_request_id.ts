/**
 * JSON-RPC request ids are unique among a session's requests in flight (MCP basic protocol,
 * "Requests"). A request under an id still in flight in its session is refused with 400 -32600
 * `invalid_request`, whatever it asks and whether or not its params are well formed: nothing is
 * checked, run or audited for it, and the request in flight under that id goes on and gets its
 * own answer. Once that is answered, the id may be used again.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { auditOf, grant, openSession, rawPost } from '../../helpers/mcp.js';
import { gate, startFaultServer } from '../../reliability/support.js';

for (const kind of databasesUnderTest()) {
  test(`a request reusing the id of a call still in flight is refused; the call in flight ends with its own answer [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.read', 'faultlab.markers.write'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const call = (id: number | string, params: unknown) => rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }) }, id);

      // A read waits at its gate (holding no writer) with id 7 in flight.
      const held = gate('held');
      const first = call(7, { name: 'faultlab.read_markers', arguments: { name: 'held' } });
      first.catch(() => undefined); // awaited below; a failed assertion before must not leave it unhandled
      await held.entered;

      const duplicates = [
        // Params the host refuses as invalid_arguments (-32602): as a duplicate, the SDK answered it, -32603 with its schema library's text.
        { name: 'faultlab.read_markers', arguments: { name: 'x' }, task: 5 },
        // Params the precheck refuses and audits.
        { name: 5, arguments: {} },
        // A well-formed call: it must not run (no marker is written) nor be audited.
        { name: 'faultlab.write_marker', arguments: { name: 'duplicate' } },
        // One the scope check would refuse and audit: refused before that, unaudited.
        { name: 'forge.list_conversations', arguments: {} },
      ];
      for (const params of duplicates) {
        const refused = await call(7, params);
        t.is(refused.status, 400, refused.text.slice(0, 300));
        t.is(refused.body.id, 7);
        t.is(refused.body.error.code, -32600);
        t.is(refused.body.error.data.code, 'invalid_request');
        t.regex(refused.body.error.message, /request id 7 is already in flight in this session/);
      }
      // Another method under the same id is refused too; the same digits as a string are another id.
      const ping = await rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }) }, 7);
      t.is(ping.status, 400, ping.text.slice(0, 300));
      t.is((await rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', id: '7', method: 'ping' }) }, '7')).status, 200);

      held.release();
      const answered = await first;
      t.is(answered.status, 200, answered.text.slice(0, 300));
      t.is(answered.body.id, 7);
      t.deepEqual(answered.body.result?.structuredContent, { name: 'held', count: 0 });
      t.is((await server.markers('duplicate')).length, 0, 'the duplicate did not run');
      const records = await auditOf(server, 'acme', { product: 'faultlab' });
      t.deepEqual(records.map((r) => [r.name, r.outcome]), [['faultlab.read_markers', 'ok']], 'only the call in flight is audited');

      // Answered, the id is free again.
      const reused = await call(7, { name: 'faultlab.read_markers', arguments: { name: 'held' } });
      t.is(reused.status, 200, reused.text.slice(0, 300));
      t.deepEqual(reused.body.result?.structuredContent, { name: 'held', count: 0 });
    } finally {
      await server.close();
    }
  });
}

for (const kind of databasesUnderTest()) {
  // MCP cancellation lets a sender take a cancelled request as finished, but a call the host
  // answers itself is still answered (`timeout`, "nothing was changed", docs/errors.md) once its
  // failure is audited, on its own POST's stream and under its id. Until that reply has gone out, a new request under the id
  // would be a second request in flight with it, and a client reading replies by id could take the
  // old one for the new: the id is refused until then, as for any call in flight.
  test(`a cancelled call's id is free again once its reply, which still carries the id, has been sent [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.read'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const post = (message: Record<string, unknown>) => rawPost(server, 'faultlab', { token, sessionId, body: JSON.stringify({ jsonrpc: '2.0', ...message }) }, message.id);

      const held = gate('cancelled');
      const first = post({ id: 7, method: 'tools/call', params: { name: 'faultlab.read_markers', arguments: { name: 'cancelled' } } });
      first.catch(() => undefined); // awaited below
      await held.entered;
      // The cancelled call's failure record waits for the lock this transaction holds: its reply is held back.
      const writing = await server.db.transaction();
      try {
        await writing('connections').where({ id: connection.id }).update({ last_used_at: Date.now() });
        t.is((await post({ method: 'notifications/cancelled', params: { requestId: 7 } })).status, 202);
        t.true(held.signal!.aborted, 'the handler was told to stop');
        const pending = await Promise.race([first.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('pending'), 300))]);
        t.is(pending, 'pending', 'the cancelled call has not been answered yet');
        const reused = await post({ id: 7, method: 'ping' });
        t.is(reused.status, 400, reused.text.slice(0, 300));
        t.regex(reused.body.error.message, /request id 7 is already in flight in this session/);
      } finally {
        await writing.rollback();
      }
      const answered = await first;
      t.is(answered.status, 200, answered.text.slice(0, 300));
      t.is(answered.body.id, 7, 'the cancelled call is answered under its id');
      t.is(answered.body.error?.data?.code, 'timeout', answered.text.slice(0, 300));
      held.release();
      t.deepEqual((await auditOf(server, 'acme', { connection_id: connection.id })).map((r) => [r.name, r.outcome]), [['faultlab.read_markers', 'timeout']]);

      const reused = await post({ id: 7, method: 'ping' });
      t.is(reused.status, 200, `answered, the id is free again: ${reused.text.slice(0, 300)}`);
      t.is(reused.body.id, 7);
    } finally {
      await server.close();
    }
  });
}
