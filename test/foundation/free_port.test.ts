/**
 * The port a restart test reuses must not be one the kernel hands out by itself: another test
 * worker's `listen(0)` or outgoing connection took it between a stop and the next start (CI saw
 * "a restart keeps clients, grants and tokens valid" fail with EADDRINUSE).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import test from 'ava';
import { freePort } from '../helpers/server.js';

const onLinux = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return undefined;
  }
})();

(onLinux ? test : test.skip)('freePort picks below the ephemeral range, a port that is free to listen on', async (t) => {
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    t.true(port >= 10_000 && port < onLinux!, `${port} is outside 10000..${onLinux! - 1}`);
  }
  // And free indeed: each can be listened on.
  for (const port of new Set(ports)) {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    await new Promise((resolve) => server.close(resolve));
  }
});
