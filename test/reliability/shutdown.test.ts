/**
 * Shutdown (README "Operational endpoints", main.ts on SIGTERM) lets a tool call that is running
 * when it begins finish, instead of cancelling it, cutting its connection or closing the parts
 * and the pool under it; and ends one still running when the drain's time is up, recorded.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { grant, openSession, rawCall } from '../helpers/mcp.js';
import { gate, startFaultServer } from './support.js';
import { DRAIN_MS } from '../../app.js';

for (const kind of databasesUnderTest()) {
  test(`shutdown lets an in-flight MCP tool call finish [${kind}]`, async (t) => {
    const server = await startFaultServer(kind);
    try {
      const { token } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const marker = 'in flight at SIGTERM';
      const door = gate(marker);
      const call = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: marker } }, { sessionId, id: 9 });
      await door.entered; // in its handler, inside its transaction: in flight
      // Registered last: the last drain hook (after the MCP host's) and the first close hook (they run in reverse).
      const drained = new Promise<void>((resolve) => server.portico.context.onDrain(() => resolve()));
      let released = false;
      let closedWhileHeld = false;
      server.portico.context.onClose(() => void (closedWhileHeld = !released));
      const stopping = server.stop();
      await drained;
      // One turn of the event loop: what shutdown does after its drain hooks without waiting has
      // happened; one that did not wait for calls in flight would have begun its close hooks.
      await new Promise((resolve) => setImmediate(resolve));
      released = true;
      door.release();
      const answer = await call;
      await stopping;
      t.false(closedWhileHeld, 'shutdown closed the parts while the call was still in flight');
      t.is(answer.status, 200, answer.text.slice(0, 300));
      t.is(answer.body?.error, undefined, `the in-flight call was not allowed to finish: ${JSON.stringify(answer.body?.error)}`);
      t.deepEqual(answer.body?.result?.structuredContent, { name: marker, written: true });
      const db = server.database.connect();
      try {
        t.is((await db('faultlab_markers').where({ name: marker })).length, 1, 'its write was committed');
      } finally {
        await db.destroy();
      }
    } finally {
      await server.close();
    }
  });
}

for (const kind of databasesUnderTest()) {
  test(`shutdown ends a call still running when the drain's time is up, recorded, with nothing written [${kind}]`, async (t) => {
    t.timeout(120_000);
    // A tool time-out longer than the drain and the shutdown's deadline (main.ts, 20 s), as TOOL_TIMEOUT_MS allows (up to 600 s).
    const server = await startFaultServer(kind, { env: { TOOL_TIMEOUT_MS: '120000' } });
    const marker = 'running past the drain';
    const door = gate(marker);
    try {
      const { token, connection } = await grant(server, { product: 'faultlab', tenant: 'acme', scopes: ['faultlab.markers.write'] });
      const sessionId = await openSession(server, token, 'faultlab');
      const call = rawCall(server, token, 'faultlab', 'tools/call', { name: 'faultlab.write_marker', arguments: { name: marker } }, { sessionId, id: 9 }).catch(() => undefined);
      await door.entered; // in its handler, inside its transaction, and it stays there
      const began = Date.now();
      await server.stop();
      const took = Date.now() - began;
      t.true(took < DRAIN_MS + 5_000, `shutdown waited ${took} ms for a call past the drain (main.ts exits 1 at ${DRAIN_MS + 10_000} ms)`);
      await call;
      door.release(); // what the handler would have done afterwards must not land
      await new Promise((resolve) => setTimeout(resolve, 200));
      const db = server.database.connect();
      try {
        t.deepEqual(await db('faultlab_markers').where({ name: marker }), [], 'the call cut off by shutdown wrote nothing');
        const records = await db('audit_log').where({ connection_id: connection.id, name: 'faultlab.write_marker' }).select('outcome');
        t.deepEqual(records.map((r) => r.outcome), ['unavailable'], 'the call has one record, saying the instance could not finish it');
      } finally {
        await db.destroy();
      }
    } finally {
      door.release();
      await server.close();
    }
  });
}
