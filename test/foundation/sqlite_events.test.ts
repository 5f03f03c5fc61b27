/** The events file through which another process (the admin CLI) reaches the SQLite server (db/sqlite_events.ts). */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appendEvents, eventsFileOf, watchEvents } from '../../db/sqlite_events.js';
import { EventBus, type PorticoEvent } from '../../shared/events.js';
import { createLogger } from '../../shared/log.js';
import { until } from '../helpers/poll.js';

function tempFile(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-events-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'portico.sqlite-events');
}

/** Collects what the bus hears; `next(n)` waits (up to 5 s) until n events have arrived. */
function listen(bus: EventBus) {
  const heard: PorticoEvent[] = [];
  const waiters: Array<() => void> = [];
  bus.on((event) => {
    heard.push(event);
    waiters.splice(0).forEach((wake) => wake());
  });
  const next = async (n: number) => {
    const deadline = Date.now() + 5_000;
    while (heard.length < n && Date.now() < deadline) await new Promise<void>((resolve) => (waiters.push(resolve), setTimeout(resolve, 100)));
    return heard.slice();
  };
  return { heard, next };
}

const revoked = (n: number): PorticoEvent => ({ type: 'connection.revoked', connectionId: `c${n}`, grantId: `g${n}` });

test('a file database has an events file beside it; an in-memory one has none', (t) => {
  t.is(eventsFileOf({ kind: 'sqlite', filename: '/data/portico.sqlite' }), '/data/portico.sqlite-events');
  t.is(eventsFileOf({ kind: 'sqlite', filename: ':memory:' }), undefined);
  t.is(eventsFileOf({ kind: 'postgres', url: 'postgres://x/y' }), undefined);
});

test('events appended by another writer reach the bus in order; earlier ones, a half-written line and a malformed one do not', async (t) => {
  const file = tempFile(t);
  await appendEvents(file, [revoked(0)]); // before the server started: already past
  const bus = new EventBus();
  const { heard, next } = listen(bus);
  const logs: string[] = [];
  const stop = watchEvents(file, bus, createLogger('info', (line) => logs.push(line)));
  t.teardown(stop);

  await appendEvents(file, [revoked(1), revoked(2)]);
  t.deepEqual(await next(2), [revoked(1), revoked(2)]);

  // A line whose end has not been written yet waits for it.
  const line = JSON.stringify(revoked(3));
  fs.appendFileSync(file, line.slice(0, 20));
  await new Promise((resolve) => setTimeout(resolve, 300)); // nothing to wait for: a delivery would have come by now
  t.is(heard.length, 2, 'half a line is not delivered');
  fs.appendFileSync(file, `${line.slice(20)}\nnot json\n`);
  await appendEvents(file, [{ type: 'surface.changed', product: 'midas', status: 'live' }]);
  t.deepEqual(await next(4), [revoked(1), revoked(2), revoked(3), { type: 'surface.changed', product: 'midas', status: 'live' }]);
  t.true(logs.some((l) => l.includes('ignored a malformed line in the events file')));
});

test('a large events file is emptied when a server starts watching it', (t) => {
  const file = tempFile(t);
  fs.writeFileSync(file, `${JSON.stringify(revoked(0))}\n`.repeat(20_000));
  t.true(fs.statSync(file).size >= 1 << 20);
  const stop = watchEvents(file, new EventBus(), createLogger('error', () => undefined));
  stop();
  t.is(fs.statSync(file).size, 0);
});

test('a line a dead writer left unfinished does not swallow the next writer’s event', async (t) => {
  const file = tempFile(t);
  const bus = new EventBus();
  const { next } = listen(bus);
  const stop = watchEvents(file, bus, createLogger('error', () => undefined));
  t.teardown(stop);
  fs.appendFileSync(file, '{"type":"connection.rev');
  await appendEvents(file, [revoked(1)]);
  t.deepEqual(await next(1), [revoked(1)]);
});

test('an events file deleted while the server runs is watched again when a writer creates it anew', async (t) => {
  const file = tempFile(t);
  const bus = new EventBus();
  const { next } = listen(bus);
  const stop = watchEvents(file, bus, createLogger('error', () => undefined));
  t.teardown(stop);
  await appendEvents(file, [revoked(1)]);
  t.deepEqual(await next(1), [revoked(1)]);
  fs.unlinkSync(file);
  // The server notices and watches the path again, creating the file anew as it does.
  t.true(await until(5_000, async () => fs.existsSync(file) || undefined, 10), 'the server did not watch the path again');
  await appendEvents(file, [revoked(2)]);
  t.deepEqual(await next(2), [revoked(1), revoked(2)]);
});

test('an events path that cannot be opened is logged and does not stop the server', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-events-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const logs: string[] = [];
  const stop = watchEvents(dir, new EventBus(), createLogger('info', (line) => logs.push(line))); // a directory, not a file
  stop();
  t.true(logs.some((line) => line.includes('cannot watch the events file; the periodic checks remain')));
});
