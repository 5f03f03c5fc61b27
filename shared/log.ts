/** Structured logging: one JSON object per line on stdout (or a given sink). */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export type LogSink = (line: string) => void;

const stdoutSink: LogSink = (line) => process.stdout.write(line + '\n');

/**
 * stdout for the service's one log line per request, written in batches: at most every
 * `maxDelayMs` (50), or at once when `maxBytes` (64 KiB) are waiting. On Linux stdout is
 * synchronous for files and pipes, so a line each would be a write(2) each on the request path,
 * and each write wakes whatever reads the pipe; once per turn of the event loop still cost a
 * loaded server a few per cent at c=10 (docs/performance.md item 12). Lines still waiting when the process
 * exits are written then; a process killed outright loses at most the last `maxDelayMs`.
 */
export function bufferedStdout(options: { maxDelayMs?: number; maxBytes?: number; write?: (text: string) => void } = {}): { sink: LogSink; flush(): void } {
  const { maxDelayMs = 50, maxBytes = 64 * 1024, write = (text: string) => void process.stdout.write(text) } = options;
  let pending: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!pending.length) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    bytes = 0;
    write(text);
  };
  process.on('exit', flush);
  const sink: LogSink = (line) => {
    pending.push(line);
    bytes += line.length + 1;
    if (bytes >= maxBytes) return flush();
    if (timer) return;
    timer = setTimeout(flush, maxDelayMs);
    timer.unref();
  };
  return { sink, flush };
}

export function createLogger(level: LogLevel = 'info', sink: LogSink = stdoutSink, base: Record<string, unknown> = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  const write = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(at) < threshold) return;
    const record = { time: isoNow(), level: at, msg, ...base, ...fields };
    // The replacer is a call per key: a line of plain values (every request's line) needs none.
    sink(JSON.stringify(record, hasObjects(base) || (fields && hasObjects(fields)) ? errorReplacer : undefined));
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    child: (fields) => createLogger(level, sink, { ...base, ...fields }),
  };
}

let isoMs = -1;
let iso = '';

/** The time as ISO 8601, formatted once per millisecond: formatting was half the cost of a request's log line. */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}

function hasObjects(fields: Record<string, unknown>): boolean {
  for (const key in fields) {
    const value = fields[key];
    if (typeof value === 'object' && value !== null) return true;
  }
  return false;
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, stack: value.stack, ...(value.cause ? { cause: value.cause } : {}) };
  }
  return value;
}
