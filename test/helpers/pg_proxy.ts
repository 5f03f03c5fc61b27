/**
 * A TCP proxy in front of PostgreSQL that a test controls: `cut()` closes every connection through
 * it (as a restarted database or a reset does), `blackhole()` silently stops carrying the bytes of
 * every connection open now while leaving its sockets open (as a NAT or firewall that dropped an
 * idle flow, or a database host that vanished, does: no FIN, no RST), `refuse(true)` turns new
 * connections away, `swallow(true)` accepts new connections and never answers them (a frozen host,
 * or a proxy whose backend is gone).
 */
import net from 'node:net';

export interface PgProxy {
  url(databaseUrl: string): string;
  cut(): number;
  blackhole(): number;
  refuse(on: boolean): void;
  swallow(on: boolean): void;
  open(): number;
  /** Bytes carried from the clients to PostgreSQL so far: written to, and flushed by, the proxy's sockets to it. */
  carried(): number;
  close(): Promise<void>;
}

export async function startPgProxy(upstreamUrl: string): Promise<PgProxy> {
  const upstream = new URL(upstreamUrl);
  const links = new Set<{ client: net.Socket; server: net.Socket; dead: boolean }>();
  let refusing = false;
  let swallowing = false;
  let carried = 0;
  const swallowed = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    if (swallowing) {
      swallowed.add(client);
      client.on('error', () => undefined);
      return;
    }
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    const link = { client, server, dead: false };
    links.add(link);
    client.on('data', (chunk: Buffer) => {
      if (!link.dead) server.write(chunk, () => (carried += chunk.length));
    });
    server.on('data', (chunk) => {
      if (!link.dead) client.write(chunk);
    });
    const end = () => {
      if (link.dead) return; // a black hole tells nobody: cut() and close() end both sides
      links.delete(link);
      client.destroy();
      server.destroy();
    };
    client.on('close', end);
    server.on('close', end);
    client.on('error', () => undefined);
    server.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as net.AddressInfo).port;
  return {
    url(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.href;
    },
    cut() {
      const n = links.size;
      for (const link of [...links]) {
        links.delete(link);
        link.client.destroy();
        link.server.destroy();
      }
      return n;
    },
    blackhole() {
      let n = 0;
      for (const link of links) {
        if (!link.dead) n += 1;
        link.dead = true;
      }
      return n;
    },
    refuse(on) {
      refusing = on;
    },
    swallow(on) {
      swallowing = on;
    },
    open: () => [...links].filter((l) => !l.dead).length,
    carried: () => carried,
    async close() {
      for (const socket of swallowed) socket.destroy();
      for (const link of links) {
        link.client.destroy();
        link.server.destroy();
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
