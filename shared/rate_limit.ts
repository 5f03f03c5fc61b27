/**
 * A fixed-window counter per key (e.g. per client IP). In memory, per instance: behind N
 * instances the effective limit is at most N times the configured one, which is enough to stop
 * registration floods and password guessing without a database write per request.
 */
export class WindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number; noted?: boolean }>();
  private sweptAt = -Infinity;

  constructor(private readonly limit: number, private readonly windowMs: number) {}

  /** Counts one hit; returns 0 when allowed, otherwise the seconds until the window resets. */
  hit(key: string, now = Date.now()): number {
    // Ended windows go once per window length: the map holds the keys of the last two windows,
    // and a caller with many keys (addresses, e-mails) does not make every hit walk all of them.
    if (now - this.sweptAt >= this.windowMs) {
      this.sweptAt = now;
      this.sweep(now);
    }
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count <= this.limit) return 0;
    return Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000));
  }

  /**
   * Whether a refusal of `key` is the first one noted in its window (then marks it noted): the
   * caller notes only the refusals it records, so the first recorded one need not be the first hit
   * refused.
   */
  firstRefused(key: string): boolean {
    const window = this.windows.get(key);
    if (!window || window.count <= this.limit || window.noted) return false;
    window.noted = true;
    return true;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
  }
}
