import test from 'ava';
import { randomBytes } from 'node:crypto';
import { databasesUnderTest, createMigratedDatabase } from '../../helpers/db.js';
import { SurfaceRegistry } from '../../../db/surfaces.js';
import { startEventRelay } from '../../../db/notify.js';
import { loadOrCreateSecret } from '../../../db/secrets.js';
import { EventBus, type PorticoEvent } from '../../../shared/events.js';
import { createLogger } from '../../../shared/log.js';
import { runAdmin } from '../../../scripts/admin.js';

const log = createLogger('silent');
const cli = (url: string, argv: string[]) => {
  const out: string[] = [];
  const err: string[] = [];
  return runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { DATABASE_URL: url }).then((code) => ({ code, out, err }));
};

for (const kind of databasesUnderTest()) {
  test(`surface ship makes a roadmap product live, seen by a running instance [${kind}]`, async (t) => {
    const database = await createMigratedDatabase(kind);
    const registry = new SurfaceRegistry(new Map([['forge', 'live'], ['midas', 'roadmap']]));
    const events = new EventBus();
    const heard: PorticoEvent[] = [];
    events.on((e) => heard.push(e));
    const macKey = await loadOrCreateSecret(database.db, 'mac_key', () => randomBytes(32).toString('base64url'));
    const relay = startEventRelay({ config: database.config, db: database.db, bus: events, macKey, log });
    const stop = registry.start(database.db, events, log, kind === 'postgres' ? 60_000 : 100);
    try {
      await relay?.ready;
      await registry.refresh(database.db, events);
      t.false(registry.isLive('midas'));
      const shipped = await cli(database.url, ['surface', 'ship', 'midas']);
      t.is(shipped.code, 0, shipped.err.join('\n'));
      t.deepEqual(shipped.out, ['midas is now live']);
      // PostgreSQL: the CLI's NOTIFY arrives (the poll is set to a minute); SQLite: the poll finds it.
      for (let i = 0; i < 100 && !registry.isLive('midas'); i += 1) await new Promise((r) => setTimeout(r, 50));
      t.true(registry.isLive('midas'));
      t.deepEqual(heard.filter((e) => e.type === 'surface.changed'), [{ type: 'surface.changed', product: 'midas', status: 'live' }]);
      const audit = await database.db('audit_log').where({ name: 'surface.ship' }).first();
      t.like(audit, { kind: 'admin', product: 'midas', outcome: 'ok', tenant_id: null });

      // Shipped again, or forge (live as declared) shipped: said so, nothing recorded or announced.
      for (const product of ['midas', 'forge']) t.deepEqual((await cli(database.url, ['surface', 'ship', product])).out, [`${product} is already live`]);
      t.deepEqual((await cli(database.url, ['surface', 'unship', 'forge'])).out, ['forge is now roadmap']);
      t.deepEqual((await cli(database.url, ['surface', 'unship', 'forge'])).out, ['forge is already roadmap']);
      t.deepEqual((await database.db('audit_log').where({ kind: 'admin' }).orderBy('seq').select('name', 'product')).map((r) => `${r.name} ${r.product}`), ['surface.ship midas', 'surface.unship forge']);

      const unknown = await cli(database.url, ['surface', 'ship', 'zeus']);
      t.not(unknown.code, 0);
      t.regex(unknown.err[0], /^error: no product "zeus"/);
      t.is(Number((await database.db('surfaces').count({ n: '*' }).first())?.n), 2, 'nothing written for an unknown product');
    } finally {
      stop();
      await relay?.close();
      await database.drop();
    }
  });
}
