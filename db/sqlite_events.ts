/**
 * Events for the SQLite server from other processes. SQLite is one server, so nothing relays
 * events between instances (db/notify.ts is PostgreSQL's), but another process still changes what
 * that server must hear at once: the admin CLI removes a member, suspends a tenant, ships a
 * surface. The CLI appends each event as one JSON line to a file beside the database
 * (`<database>-events`); the server watches the file (inotify on Linux) and delivers the lines it
 * has not read yet on its own bus, as the relay would.
 *
 * A lost line (a watch that failed, a file system without change notification) costs time, not
 * safety: a request whose token is not cached reads the grant store anyway, and the server's
 * periodic checks catch the rest (revoked connections every second, mcp/index.ts; surfaces every
 * two seconds, db/surfaces.ts).
 */
import fs from 'node:fs';
import { appendFile, open as openFile } from 'node:fs/promises';
import type { DatabaseConfig } from '../shared/config.js';
import type { EventBus, PorticoEvent } from '../shared/events.js';
import type { Logger } from '../shared/log.js';

/** A file older events accumulate in is emptied when a server starts, once it is this large. */
const RESET_AT_BYTES = 1 << 20;
/** At most this much is read per change; a line longer than this (never an event) is skipped. */
const READ_LIMIT_BYTES = 256 << 10;

/** The events file of a file database; none for an in-memory one (no other process can reach it). */
export function eventsFileOf(config: DatabaseConfig): string | undefined {
  return config.kind === 'sqlite' && config.filename !== ':memory:' ? `${config.filename}-events` : undefined;
}

/**
 * Appends events for the server to hear, in one write. Each line also starts with a newline, so a
 * line a dead writer left unfinished ends there and cannot swallow this one (the reader skips it).
 */
export async function appendEvents(file: string, events: readonly PorticoEvent[]): Promise<void> {
  if (events.length) await appendFile(file, events.map((event) => `\n${JSON.stringify(event)}\n`).join(''), { mode: 0o600 });
}

/**
 * Delivers on `bus` every event appended to `file` from now on; returns the stop function. Nothing
 * here stops the server: a file that cannot be opened or watched is logged and left to the
 * periodic checks. A file deleted or replaced while the server runs is watched again.
 */
export function watchEvents(file: string, bus: EventBus, log: Logger): () => void {
  let offset = 0;
  let inode = 0;
  let watcher: fs.FSWatcher | undefined;
  let stopped = false;
  let reading: Promise<void> | undefined;
  let again = false;

  /** Opens (creating) the file and starts from its end: what is in it already happened before. */
  const open = (startAtEnd: boolean): boolean => {
    try {
      fs.closeSync(fs.openSync(file, 'a', 0o600));
      if (startAtEnd && fs.statSync(file).size >= RESET_AT_BYTES) fs.truncateSync(file, 0);
      const stat = fs.statSync(file);
      inode = stat.ino;
      offset = startAtEnd ? stat.size : 0;
      watcher = fs.watch(file, { persistent: false }, (kind) => (kind === 'rename' ? rewatch() : onChange()));
      watcher.on('error', (error) => log.warn('watching the events file failed; the periodic checks remain', { err: error, file }));
      return true;
    } catch (error) {
      log.warn('cannot watch the events file; the periodic checks remain', { err: error, file });
      return false;
    }
  };
  // Deleted or replaced (an operator's clean-up, a restore): watch the file now at that path, from its start.
  const rewatch = () => {
    watcher?.close();
    watcher = undefined;
    setTimeout(() => {
      if (!stopped && !watcher && open(false)) onChange();
    }, 50).unref();
  };

  const readNew = async (): Promise<void> => {
    const stat = await fs.promises.stat(file).catch(() => undefined);
    if (!stat) return;
    if (stat.ino !== inode || stat.size < offset) {
      inode = stat.ino; // another file now, or emptied by a starting server
      offset = 0;
    }
    if (stat.size === offset) return;
    if (stat.size - offset > READ_LIMIT_BYTES) offset = stat.size - READ_LIMIT_BYTES; // the cut line is skipped below
    const handle = await openFile(file, 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(stat.size - offset), 0, stat.size - offset, offset);
      const text = buffer.subarray(0, bytesRead).toString('utf8');
      const complete = text.lastIndexOf('\n') + 1; // a line still being written is read next time…
      if (complete === 0 && bytesRead >= READ_LIMIT_BYTES) {
        offset += bytesRead; // …unless it is longer than any event: then it is no event at all
        return;
      }
      offset += Buffer.byteLength(text.slice(0, complete));
      for (const line of text.slice(0, complete).split('\n')) {
        if (!line) continue;
        try {
          bus.deliver(JSON.parse(line) as PorticoEvent);
        } catch (error) {
          log.warn('ignored a malformed line in the events file', { err: error, file });
        }
      }
    } finally {
      await handle.close();
    }
  };
  const onChange = () => {
    if (reading) {
      again = true;
      return;
    }
    reading = readNew()
      .catch((error: unknown) => log.warn('reading the events file failed', { err: error, file }))
      .finally(() => {
        reading = undefined;
        if (again) {
          again = false;
          onChange();
        }
      });
  };

  open(true);
  return () => {
    stopped = true;
    watcher?.close();
  };
}
