import test from 'ava';
import { createLogger } from '../../shared/log.js';

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
