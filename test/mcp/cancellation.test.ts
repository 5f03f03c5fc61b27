/**
 * mcp/cancellation.ts: a call's cancellation, whose AbortSignal is made only when read, and the
 * calls' time-outs on one timer; and that a finished call leaves nothing of itself reachable
 * from its cancellation.
 */
import test from 'ava';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Cancellation, Deadlines } from '../../mcp/cancellation.js';
import { createTestDatabase } from '../helpers/db.js';
import { forgePipeline } from '../helpers/pipeline.js';

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

test('a listener can be removed: it is not called, the others are, in order; removing again or after the abort is harmless', (t) => {
  const cancellation = new Cancellation();
  const seen: string[] = [];
  cancellation.onAbort(() => seen.push('first'));
  const removeSecond = cancellation.onAbort(() => seen.push('second'));
  cancellation.onAbort(() => seen.push('third'));
  removeSecond();
  removeSecond();
  cancellation.abort('stop');
  t.deepEqual(seen, ['first', 'third']);
  const removeLate = cancellation.onAbort(() => seen.push('late'));
  removeLate();
  t.deepEqual(seen, ['first', 'third', 'late'], 'a listener added after the abort has run already');
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
  // Times are wide enough that a stalled machine (a timer late by tens of milliseconds) keeps the order.
  const deadlines = new Deadlines(200, (cancellation) => {
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
  await sleep(125);
  const b = start('b'); // due 125 ms after a
  deadlines.end(ended);
  await sleep(150); // a is due, b is not
  t.deepEqual(expired, ['a']);
  t.true(a.aborted);
  t.false(b.aborted, 'not before its own time');
  await sleep(200);
  t.deepEqual(expired, ['a', 'b'], 'the timer was armed again for the next one');
  t.false(ended.aborted);
  const c = start('c'); // the queue was empty: a new timer
  deadlines.end(c);
  await sleep(300); // nothing to wait for: c's deadline, had it not ended, would have passed by now
  t.deepEqual(expired, ['a', 'b']);
});

test('a finished call leaves nothing reachable from its cancellation: its result can be collected while the cancellation lives [sqlite]', async (t) => {
  const database = await createTestDatabase('sqlite');
  const db = database.connect();
  t.teardown(async () => {
    await db.destroy();
    await database.drop();
  });
  const { pipeline, principal } = await forgePipeline(db, database.url);
  t.teardown(() => pipeline.close());

  // The host keeps a call's cancellation while the call is in flight, and the client may still
  // cancel it after it has finished. Nothing of the finished call may hang on it: a listener
  // left there held the call's promise, and the promise the call's result (docs/performance.md,
  // item 15: every call's objects then outlived the young generation).
  const cancellation = new Cancellation();
  const collected = await (async () => {
    const result = await pipeline.callTool('forge', principal, 'forge.list_conversations', { limit: 10 }, { requestId: 'r-1', cancellation });
    t.falsy(result.isError);
    t.true(Array.isArray((result.structuredContent as { conversations?: unknown }).conversations));
    return new WeakRef(result.structuredContent as object);
  })();
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  for (let i = 0; i < 5 && collected.deref(); i += 1) {
    await new Promise((resolve) => setImmediate(resolve)); // a WeakRef's target is kept until the current job ends
    gc();
  }
  t.is(collected.deref(), undefined, 'the finished call\'s result is not reachable from its cancellation');
  t.false(cancellation.aborted);
  t.notThrows(() => cancellation.abort('the client cancelled after the answer'));
});
