import test from 'ava';
import { createMigratedDatabase, databasesUnderTest } from '../../helpers/db.js';
import { randomUUID } from 'node:crypto';
import { channelFor, relayName, startEventRelay } from '../../../db/notify.js';
import { EventBus, type PorticoEvent } from '../../../shared/events.js';
import { createLogger } from '../../../shared/log.js';
import net from 'node:net';
import { loadConfig } from '../../../shared/config.js';
import { loadSecrets, startPortico } from '../../../app.js';
import { defaultMounts } from '../../../mounts.js';
import { startPgProxy } from '../../helpers/pg_proxy.js';
import { until } from '../../helpers/poll.js';

const log = createLogger('silent');

function nextEvent(bus: EventBus, timeoutMs = 5_000): Promise<PorticoEvent | 'timeout'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), timeoutMs);
    const off = bus.on((event) => {
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

if (databasesUnderTest().includes('postgres')) {
  test('revocations reach every instance of a deployment and no other [postgres]', async (t) => {
    const database = await createMigratedDatabase('postgres');
    const pools = [database.connect(), database.connect(), database.connect()];
    const buses = [new EventBus(), new EventBus(), new EventBus()];
    const [a, b] = [randomUUID(), randomUUID()];
    const relays = buses.map((bus, i) =>
      startEventRelay({ config: database.config, db: pools[i], bus, macKey: i < 2 ? a : b, log })!);
    try {
      await Promise.all(relays.map((r) => r.ready));
      const local = nextEvent(buses[0]);
      const remote = nextEvent(buses[1]);
      const foreign = nextEvent(buses[2], 1_000);
      const event: PorticoEvent = { type: 'connection.revoked', connectionId: 'c-1', grantId: 'g-1' };
      await buses[0].publish(event);
      t.deepEqual(await local, event, 'delivered in-process');
      t.deepEqual(await remote, event, 'delivered to the other instance');
      t.is(await foreign, 'timeout', 'another deployment does not hear it');
    } finally {
      await Promise.all(relays.map((r) => r.close()));
      await Promise.all(pools.map((p) => p.destroy()));
      await database.drop();
    }
  });

  test('the relay reconnects after its connection is killed [postgres]', async (t) => {
    const database = await createMigratedDatabase('postgres');
    const pools = [database.connect(), database.connect()];
    const buses = [new EventBus(), new EventBus()];
    const key = randomUUID();
    const relays = buses.map((bus, i) => startEventRelay({ config: database.config, db: pools[i], bus, macKey: key, log })!);
    try {
      await Promise.all(relays.map((r) => r.ready));
      // Kill every LISTEN backend, as a PostgreSQL restart or failover would.
      const killed = await database.db.raw(`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ?`, [relayName(channelFor(key))]);
      t.is(killed.rows.length, 2, 'both listeners were terminated');
      const event: PorticoEvent = { type: 'surface.changed', product: 'midas', status: 'live' };
      let received: PorticoEvent | 'timeout' = 'timeout';
      for (let attempt = 0; attempt < 50 && received === 'timeout'; attempt += 1) {
        const pending = nextEvent(buses[1], 200);
        await buses[0].publish(event);
        received = await pending;
      }
      t.deepEqual(received, event);
    } finally {
      await Promise.all(relays.map((r) => r.close()));
      await Promise.all(pools.map((p) => p.destroy()));
      await database.drop();
    }
  });

  test('a LISTEN connection that stops answering without closing is given up, and the relay listens again [postgres]', async (t) => {
    const database = await createMigratedDatabase('postgres');
    const proxy = await startPgProxy(database.url);
    const pools = [database.connect(), database.connect()];
    const buses = [new EventBus(), new EventBus()];
    const key = randomUUID();
    const states: boolean[] = [];
    buses[1].onRelayState((listening) => states.push(listening));
    // Instance B reaches PostgreSQL through a proxy that can silence its connections (a NAT or
    // firewall that dropped the flow, a frozen host: no FIN, no RST).
    const relays = [
      startEventRelay({ config: database.config, db: pools[0], bus: buses[0], macKey: key, log })!,
      startEventRelay({ config: { kind: 'postgres', url: proxy.url(database.url) }, db: pools[1], bus: buses[1], macKey: key, log, heartbeatMs: 300 })!,
    ];
    try {
      await Promise.all(relays.map((r) => r.ready));
      t.is(proxy.blackhole(), 1, 'B listens through the proxy');
      const event: PorticoEvent = { type: 'surface.changed', product: 'midas', status: 'live' };
      let received: PorticoEvent | 'timeout' = 'timeout';
      // The states as they were when B heard the event: on a loaded machine a 300 ms heartbeat may
      // miss again afterwards, which is the relay doing its work, not what this test is about.
      let statesWhenHeard: boolean[] = [];
      for (let attempt = 0; attempt < 40 && received === 'timeout'; attempt += 1) {
        const pending = nextEvent(buses[1], 250);
        await buses[0].publish(event);
        received = await pending;
        statesWhenHeard = [...states];
      }
      t.deepEqual(received, event, 'B hears the other instance again');
      t.is(statesWhenHeard[0], true, 'B listened at first');
      const gaveUp = statesWhenHeard.indexOf(false);
      t.true(gaveUp > 0, 'B stopped trusting its cache while it heard nothing');
      // The new connection's LISTEN answer and the event can arrive in one read, so B may hear the
      // event a moment before it says it listens again: wait for that, and for nothing after it.
      await until(5_000, async () => (states.indexOf(true, gaveUp) > gaveUp ? true : undefined), 10);
      t.true(states.indexOf(true, gaveUp) > gaveUp, 'then listened again');
    } finally {
      await Promise.all(relays.map((r) => r.close()));
      proxy.cut();
      await proxy.close();
      await Promise.all(pools.map((p) => p.destroy()));
      await database.drop();
    }
  });

  test('a start that fails after the relay is listening (port taken) closes the relay again [postgres]', async (t) => {
    const database = await createMigratedDatabase('postgres');
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: `http://127.0.0.1:${port}`, DATABASE_URL: database.url, DEMO: 'off', LOG_LEVEL: 'silent' });
      const error = await t.throwsAsync(startPortico(config, { log, mounts: defaultMounts() }));
      t.is((error as { code?: string }).code, 'EADDRINUSE');
      // The relay listened on the deployment's channel during the start; nothing may listen now.
      const channel = channelFor((await loadSecrets(database.db)).macKey);
      const listening = await database.db.raw("select count(*)::int as n from pg_stat_activity where application_name = ? and state <> 'active'", [relayName(channel)]);
      t.is(listening.rows[0].n, 0);
    } finally {
      taken.close();
      await database.drop();
    }
  });
}

test('on SQLite there is no relay: events stay in the process', async (t) => {
  const database = await createMigratedDatabase('sqlite');
  try {
    const bus = new EventBus();
    t.is(startEventRelay({ config: database.config, db: database.db, bus, macKey: 'k', log }), undefined);
    const received = nextEvent(bus);
    await bus.publish({ type: 'surface.changed', product: 'midas', status: 'live' });
    t.like(await received, { product: 'midas' });
  } finally {
    await database.drop();
  }
});
