/**
 * mcp/cancellation.ts: a call's cancellation, whose AbortSignal is made only when read.
 */
import test from 'ava';
import { Cancellation } from '../../mcp/cancellation.js';

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
