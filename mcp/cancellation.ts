/**
 * A call's cancellation: the client's notifications/cancelled, its session closing, or the tool
 * time-out. Every call needs one and almost none is ever cancelled, while an AbortController and
 * a listener on its signal (Node's EventTarget) cost more than the rest of the pipeline's own
 * work (~7 % of a loaded server's CPU, docs/performance.md item 12). So the AbortSignal a handler
 * can read is made when it is first read, and the pipeline listens here instead.
 */
export class Cancellation {
  private controller: AbortController | undefined;
  private listeners: Array<(reason: unknown) => void> | undefined;
  private reason: unknown;
  private cancelled = false;

  get aborted(): boolean {
    return this.cancelled;
  }

  /** An AbortSignal that aborts with this cancellation (already aborted if it has been). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Cancels, once: listeners first (in the order they were added), then the signal. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    listeners?.forEach((listener) => listener(reason));
    this.controller?.abort(reason);
  }

  /**
   * Calls `listener` once, when cancelled (at once if it already is). Returns what removes it:
   * a caller done with the cancellation removes its listener, so nothing the listener holds (a
   * call's promise and, through it, the call's result) stays reachable from the cancellation.
   */
  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.cancelled) {
      listener(this.reason);
      return () => undefined;
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const i = this.listeners?.indexOf(listener) ?? -1;
      if (i >= 0) this.listeners!.splice(i, 1);
    };
  }
}

/**
 * Time-outs of one length on one timer. Every call waits the same TOOL_TIMEOUT_MS, so calls
 * expire in the order they started: a Map (insertion order) is the queue, and one timer, armed
 * for the oldest, serves them all instead of a Node timer set and cleared per call. Monotonic
 * time (performance.now), so a change of the wall clock neither ends calls early nor late.
 */
export class Deadlines {
  private readonly due = new Map<Cancellation, number>();
  private timer: NodeJS.Timeout | undefined;

  /** `expire` runs for each cancellation whose time is up before it was ended. */
  constructor(private readonly ms: number, private readonly expire: (cancellation: Cancellation) => void) {}

  start(cancellation: Cancellation): void {
    this.due.set(cancellation, performance.now() + this.ms);
    if (!this.timer) this.arm(this.ms);
  }

  end(cancellation: Cancellation): void {
    this.due.delete(cancellation);
  }

  private arm(delay: number): void {
    this.timer = setTimeout(() => this.fire(), delay);
    this.timer.unref(); // the server keeps the process alive, not a call's time-out
  }

  private fire(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const [cancellation, at] of this.due) {
      if (at > now) return this.arm(Math.max(1, at - now));
      this.due.delete(cancellation);
      this.expire(cancellation);
    }
  }
}
