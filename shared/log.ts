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
 * stdout written once per turn of the event loop, for the service's one log line per request:
 * on Linux stdout is synchronous for files and pipes, so a line each would be a write(2) each on
 * the request path. Lines still buffered when the process exits are written then.
 */
export function bufferedStdout(): { sink: LogSink; flush(): void } {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending.length) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    process.stdout.write(text);
  };
  process.on('exit', flush);
  const sink: LogSink = (line) => {
    pending.push(line);
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  return { sink, flush };
}

export function createLogger(level: LogLevel = 'info', sink: LogSink = stdoutSink, base: Record<string, unknown> = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  const write = (at: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(at) < threshold) return;
    const record = { time: new Date().toISOString(), level: at, msg, ...base, ...fields };
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
