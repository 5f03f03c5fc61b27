/**
 * A surface change heard from another process (the CLI's NOTIFY) must not be undone by the
 * registry's own poll when that poll read the surfaces table before the change committed and
 * answered after the event arrived: the instance would go back to serving the old status (midas
 * tools refused right after `surface ship`, or still served after `surface unship`) until the
 * next poll, and every connected session would be told tools/list_changed for nothing.
 */
import test from 'ava';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { connectDatabase } from '../../db/connect.js';
import { createMigratedDatabase, databasesUnderTest } from '../helpers/db.js';
import { SurfaceRegistry } from '../../db/surfaces.js';
import { startEventRelay } from '../../db/notify.js';
import { loadOrCreateSecret } from '../../db/secrets.js';
import { EventBus, type PorticoEvent } from '../../shared/events.js';
import { createLogger } from '../../shared/log.js';
import { runAdmin } from '../../scripts/admin.js';

const log = createLogger('silent');

/**
 * A TCP proxy in front of PostgreSQL whose answers arrive `ms` late (a busy network, or an event
 * loop that gets to the socket late): the poll's query is answered as of when it arrived.
 */
async function slowAnswers(upstreamUrl: string, ms: number): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client).add(server);
    client.on('data', (chunk) => server.write(chunk));
    server.on('data', (chunk) => setTimeout(() => client.writable && client.write(chunk), ms));
    for (const socket of [client, server]) {
      socket.on('error', () => undefined);
      socket.on('close', () => (client.destroy(), server.destroy()));
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(upstreamUrl);
  url.hostname = '127.0.0.1';
  url.port = String((proxy.address() as net.AddressInfo).port);
  return {
    url: url.href,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
const pgTest = databasesUnderTest().includes('postgres') ? test.serial : test.skip;

pgTest('a poll that read the surfaces before `surface ship` committed does not take back the change the instance already heard [postgres]', async (t) => {
  t.timeout(120_000);
  const database = await createMigratedDatabase('postgres');
  const registry = new SurfaceRegistry(new Map([['forge', 'live'], ['midas', 'roadmap']]));
  const events = new EventBus();
  const heard: Array<PorticoEvent & { type: 'surface.changed' }> = [];
  events.on((e) => {
    if (e.type === 'surface.changed') heard.push(e);
  });
  const macKey = await loadOrCreateSecret(database.db, 'mac_key', () => randomBytes(32).toString('base64url'));
  const relay = startEventRelay({ config: database.config, db: database.db, bus: events, macKey, log });
  // The poll reads through a connection whose answers come 100 ms late, and runs back to back, so
  // that the CLI's commit falls inside a poll in flight (in production, one poll every 2 s: now
  // and then it does). The relay hears the NOTIFY directly, as fast as ever.
  const slow = await slowAnswers(database.url, 100);
  const polling = connectDatabase({ kind: 'postgres', url: slow.url });
  const stop = registry.start(polling, events, log, 1);
  try {
    await relay!.ready;
    const cli = (argv: string[]) => runAdmin(argv, { out: () => undefined, err: () => undefined }, { DATABASE_URL: database.url });
    const flips: string[] = [];
    for (let round = 0; round < 5; round += 1) {
      for (const [verb, status] of [['ship', 'live'], ['unship', 'roadmap']] as const) {
        const before = heard.length;
        t.is(await cli(['surface', verb, 'midas']), 0);
        // The instance hears it (NOTIFY or poll); from then on it must keep serving that status.
        for (let i = 0; i < 200 && registry.statusOf('midas') !== status; i += 1) await new Promise((r) => setTimeout(r, 5));
        for (let i = 0; i < 10; i += 1) {
          await new Promise((r) => setTimeout(r, 30));
          if (registry.statusOf('midas') !== status) flips.push(`round ${round}: after ${verb}, the instance went back to ${registry.statusOf('midas')}`);
        }
        // Nothing was announced to the sessions that was then taken back.
        const told = heard.slice(before).map((e) => e.status);
        if (told.some((s) => s !== status)) flips.push(`round ${round}: after ${verb}, sessions were told ${told.join(' → ')}`);
      }
    }
    t.deepEqual(flips, []);
  } finally {
    stop();
    await relay?.close();
    await polling.destroy();
    await slow.close();
    await database.drop();
  }
});
