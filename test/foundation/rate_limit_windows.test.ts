/**
 * The per-key counters behind the sign-in, registration and MCP limits (shared/rate_limit.ts)
 * live in one map per limiter. Keys come from callers (an address, an address and an e-mail, a
 * connection), so how the map is kept small decides what a caller with many keys costs: the
 * expired windows are swept once per window length, never once per request.
 */
import test from 'ava';
import { WindowLimiter } from '../../shared/rate_limit.js';

/** A Map that counts the entries walked by iterating it. */
class CountingMap<K, V> extends Map<K, V> {
  walked = 0;
  override *[Symbol.iterator](): MapIterator<[K, V]> {
    for (const entry of super[Symbol.iterator]()) {
      this.walked += 1;
      yield entry;
    }
  }
  override entries(): MapIterator<[K, V]> {
    return this[Symbol.iterator]();
  }
}

function instrumented(limit: number, windowMs: number): { limiter: WindowLimiter; windows: CountingMap<string, unknown> } {
  const limiter = new WindowLimiter(limit, windowMs);
  const windows = new CountingMap<string, unknown>();
  Object.defineProperty(limiter, 'windows', { value: windows });
  return { limiter, windows };
}

test('many keys in one window: a request does not walk every counter', (t) => {
  const { limiter, windows } = instrumented(10, 60_000);
  const start = 1_000_000;
  // 12,000 addresses (or address and e-mail pairs) within one minute…
  for (let i = 0; i < 12_000; i += 1) limiter.hit(`203.0.113.${i}`, start + i);
  const walkedBefore = windows.walked;
  // …then 2,000 more requests in the same minute.
  for (let i = 0; i < 2_000; i += 1) limiter.hit(`198.51.100.${i}`, start + 20_000 + i);
  const walked = windows.walked - walkedBefore;
  t.true(walked < 50_000, `2,000 requests walked ${walked} counters (${Math.round(walked / 2_000)} each)`);
  t.is(limiter.hit('203.0.113.1', start + 30_000), 0, 'the counters still count');
});

test('counters of windows that ended are dropped, however few there are', (t) => {
  const { limiter, windows } = instrumented(10, 60_000);
  for (let i = 0; i < 500; i += 1) limiter.hit(`203.0.113.${i}`, 1_000_000 + i);
  limiter.hit('198.51.100.1', 1_000_000 + 3 * 60_000);
  t.true(windows.size <= 1, `${windows.size} counters kept after their windows ended`);
});
