import test from 'ava';
import { bufferedStdout, createLogger } from '../../../shared/log.js';

function collect() {
  const lines: Array<Record<string, any>> = [];
  return { lines, log: createLogger('info', (line) => lines.push(JSON.parse(line))) };
}

test('a line of plain values is written as they are, with time, level and message', (t) => {
  const { lines, log } = collect();
  log.info('request', { request_id: 'r1', status: 200, duration_ms: 1.5, path: '/mcp/forge' });
  log.debug('not at this level');
  t.is(lines.length, 1);
  const [line] = lines;
  t.deepEqual({ ...line, time: undefined }, { time: undefined, level: 'info', msg: 'request', request_id: 'r1', status: 200, duration_ms: 1.5, path: '/mcp/forge' });
  t.true(!Number.isNaN(Date.parse(line.time)));
});

test('errors are written with name, message, stack and cause, at any depth and in a child logger\'s fields', (t) => {
  const { lines, log } = collect();
  const cause = new Error('disk full');
  log.error('audit write failed', { err: new Error('insert failed', { cause }) });
  log.warn('nested', { detail: { reason: new TypeError('bad value') } });
  log.child({ err: new Error('from the parent') }).info('child line', { n: 1 });

  t.is(lines[0].err.name, 'Error');
  t.is(lines[0].err.message, 'insert failed');
  t.regex(lines[0].err.stack, /insert failed/);
  t.is(lines[0].err.cause.message, 'disk full');
  t.is(lines[1].detail.reason.name, 'TypeError');
  t.is(lines[1].detail.reason.message, 'bad value');
  t.is(lines[2].err.message, 'from the parent');
  t.is(lines[2].n, 1);
});

test('buffered output is written in one piece after maxDelayMs, or at once past maxBytes, and on flush', async (t) => {
  const writes: string[] = [];
  // A delay far past any stall of a loaded machine: with 30 ms, a stall let the flush's timer run
  // before the 10 ms wait below had looked (a list of 30 ms timers due earlier runs all its due ones).
  const slow = bufferedStdout({ maxDelayMs: 1_000, maxBytes: 100, write: (text) => writes.push(text) });
  slow.sink('one');
  slow.sink('two');
  t.deepEqual(writes, [], 'nothing is written on the request path');
  await new Promise((resolve) => setTimeout(resolve, 10));
  t.deepEqual(writes, [], 'still waiting: a turn of the event loop is not enough');
  while (!writes.length) await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(writes, ['one\ntwo\n']);

  const out = bufferedStdout({ maxDelayMs: 30, maxBytes: 100, write: (text) => writes.push(text) });
  out.sink('x'.repeat(60));
  out.sink('y'.repeat(60));
  t.deepEqual(writes.slice(1), [`${'x'.repeat(60)}\n${'y'.repeat(60)}\n`], 'past maxBytes: written at once');
  out.sink('three');
  out.flush();
  t.deepEqual(writes.slice(2), ['three\n']);
  await new Promise((resolve) => setTimeout(resolve, 60)); // nothing to wait for: the flush's cleared timer would have written by now
  t.is(writes.length, 3, 'the flushed line is not written again');
});
