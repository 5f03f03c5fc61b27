/**
 * mcp/cancellation.ts: a call's cancellation, whose AbortSignal is made only when read, and the
 * calls' time-outs on one timer.
 */
import test from 'ava';
import { Cancellation, Deadlines } from '../../mcp/cancellation.js';

test('listeners run once, in order, before the signal aborts; later listeners run at once', (t) => {
  const cancellation = new Cancellation();
  const seen: string[] = [];
  const signal = cancellation.signal;
  signal.addEventListener('abort', () => seen.push(`signal ${String(signal.reason)}`));
  cancellation.onAbort((reason) => seen.push(`first ${String(reason)}`));
  cancellation.onAbort((reason) => seen.push(`second ${String(reason)}`));
  t.false(cancellation.aborted);
  t.false(signal.aborted);
  cancellation.abort('stop');
  cancellation.abort('again');
  t.true(cancellation.aborted);
  t.deepEqual(seen, ['first stop', 'second stop', 'signal stop']);
  cancellation.onAbort((reason) => seen.push(`late ${String(reason)}`));
  t.is(seen.at(-1), 'late stop');
  t.is(cancellation.signal, signal, 'one signal');
});

test('a signal first read after the abort is aborted already, with the same reason', (t) => {
  const cancellation = new Cancellation();
  const reason = new Error('time is up');
  cancellation.abort(reason);
  t.true(cancellation.signal.aborted);
  t.is(cancellation.signal.reason, reason);
});

test('an abort without a reason gives the AbortError an AbortController gives', (t) => {
  const cancellation = new Cancellation();
  cancellation.abort();
  t.is((cancellation.signal.reason as DOMException).name, 'AbortError');
});

test('deadlines expire in the order they started, each after its own time, and never once ended', async (t) => {
  const expired: string[] = [];
  const names = new Map<Cancellation, string>();
  const deadlines = new Deadlines(40, (cancellation) => {
    expired.push(names.get(cancellation)!);
    cancellation.abort('time');
  });
  const start = (name: string) => {
    const cancellation = new Cancellation();
    names.set(cancellation, name);
    deadlines.start(cancellation);
    return cancellation;
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const a = start('a');
  const ended = start('ended');
  await sleep(25);
  const b = start('b'); // due 25 ms after a
  deadlines.end(ended);
  await sleep(30); // a is due, b is not
  t.deepEqual(expired, ['a']);
  t.true(a.aborted);
  t.false(b.aborted, 'not before its own time');
  await sleep(40);
  t.deepEqual(expired, ['a', 'b'], 'the timer was armed again for the next one');
  t.false(ended.aborted);
  const c = start('c'); // the queue was empty: a new timer
  deadlines.end(c);
  await sleep(60);
  t.deepEqual(expired, ['a', 'b']);
});
