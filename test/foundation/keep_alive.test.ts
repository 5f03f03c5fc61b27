/**
 * Idle kept-alive connections wait KEEP_ALIVE_TIMEOUT_MS (65 s) for their next request. With
 * Node's 5 s a client's request after a pause could meet the server closing the socket, and a POST
 * is not retried: the MCP SDK client saw "fetch failed" (app.ts). Raw sockets, so that what is
 * seen is the server's doing, not a client's pool.
 */
import { connect, type Socket } from 'node:net';
import test from 'ava';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { startTestServer } from '../helpers/server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one GET /healthz on `socket` and resolves with the response head once its body ended. */
function request(socket: Socket, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received)?.[1] ?? NaN);
      if (end >= 0 && received.length >= end + 4 + length) done(() => resolve(received.slice(0, end)));
    };
    const onClose = () => done(() => reject(new Error(`the server closed the connection; received ${JSON.stringify(received)}`)));
    const done = (settle: () => void) => {
      socket.off('data', onData).off('close', onClose);
      settle();
    };
    socket.on('data', onData).on('close', onClose);
    socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
  });
}

async function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

test('a kept-alive connection still answers after 6 s idle, past Node’s 5 s and a shorter REQUEST_TIMEOUT_MS', async (t) => {
  t.timeout(30_000);
  const server = await startTestServer('sqlite', { env: { REQUEST_TIMEOUT_MS: '2000' }, mounts: [] });
  const socket = await open(server.url);
  try {
    const host = new URL(server.url).host;
    const first = await request(socket, host);
    t.regex(first, /^HTTP\/1\.1 200/);
    t.regex(first, /\r\nkeep-alive: timeout=65(\r\n|$)/i, 'clients are told how long the connection waits');
    await sleep(6_000);
    t.false(socket.destroyed);
    t.regex(await request(socket, host), /^HTTP\/1\.1 200/, 'the same connection answers the next request');
  } finally {
    socket.destroy();
    await server.close();
  }
});

test('KEEP_ALIVE_TIMEOUT_MS shortens the wait: the idle connection is closed by the server', async (t) => {
  t.timeout(30_000);
  const server = await startTestServer('sqlite', { env: { KEEP_ALIVE_TIMEOUT_MS: '1000' }, mounts: [] });
  const socket = await open(server.url);
  try {
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    t.regex(await request(socket, new URL(server.url).host), /\r\nkeep-alive: timeout=1(\r\n|$)/i);
    const answered = Date.now();
    const at = await Promise.race([closed, sleep(15_000).then(() => undefined)]);
    t.truthy(at, 'the server closed the idle connection');
    t.true(at! - answered >= 900, `closed ${at! - answered} ms after the answer`);
  } finally {
    socket.destroy();
    await server.close();
  }
});

test('KEEP_ALIVE_TIMEOUT_MS outside 1000-3600000 or not a number is a configuration error naming it', (t) => {
  for (const value of ['999', '3600001', '5s']) {
    const error = t.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: value }), { instanceOf: ConfigError }, value);
    t.regex(error!.message, /KEEP_ALIVE_TIMEOUT_MS/);
  }
  t.is(loadConfig({}).keepAliveTimeoutMs, 65_000);
  t.is(loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '' }).keepAliveTimeoutMs, 65_000, 'empty is the default, as for every setting');
});
