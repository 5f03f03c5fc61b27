/** `npm start`: read the configuration, start Portico, stop gracefully on SIGTERM/SIGINT. */
import os from 'node:os';
import { ConfigError, loadConfig, type Config } from './shared/config.js';
import { bufferedStdout, createLogger } from './shared/log.js';
import { DRAIN_MS, startPortico, type Portico } from './app.js';
import { defaultMounts, defaultSeeders } from './mounts.js';
import { SchemaAheadError } from './db/migrate.js';
import { describeDatabaseFailure } from './db/errors.js';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`portico: invalid configuration: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

const stdout = bufferedStdout();
const log = createLogger(config.logLevel, stdout.sink);
/** Why the server could not listen, in the operator's terms (the variable to change), by the system's error code. */
const LISTEN_PROBLEMS: Record<string, string> = {
  EADDRINUSE: 'the port is in use: stop what holds it, or choose another PORT',
  EACCES: 'not allowed to listen on this port: choose a PORT above 1023, or grant the permission',
  EADDRNOTAVAIL: 'HOST is not an address of this machine',
  ENOTFOUND: 'HOST does not resolve to an address of this machine',
};

/** Shutdown gives in-flight requests DRAIN_MS; past this the process exits anyway (a database that stopped answering). */
const SHUTDOWN_DEADLINE_MS = DRAIN_MS + 10_000;

// Listened for before the start begins: a signal during start-up stops the start after the step
// under way (app.ts StartOptions.signal) instead of ending the process in the middle of it.
const starting = new AbortController();
let portico: Portico | undefined;
let stopping: NodeJS.Signals | undefined;
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));

portico = await startPortico(config, { log, mounts: defaultMounts(), seeders: defaultSeeders(), signal: starting.signal }).catch((error: unknown) => {
  if (stopping && error === starting.signal.reason) {
    log.warn('start interrupted', { signal: stopping });
    return process.exit(exitStatusOf(stopping));
  }
  const problem = LISTEN_PROBLEMS[(error as { code?: string }).code ?? ''];
  const database = describeDatabaseFailure(error);
  if (problem && (error as { listening?: boolean }).listening === true) log.error(`start failed: cannot listen on ${config.host}:${config.port}: ${problem}`);
  else if (error instanceof SchemaAheadError) log.error(`start failed: ${error.message}`);
  // In Portico's words, as the admin CLI says it, with the driver's own line beside it (no stack).
  else if (database) log.error(`start failed: ${database}`, { detail: error instanceof Error ? error.message : String(error) });
  else log.error('start failed', { err: error });
  process.exit(1);
});

if (portico.demoCredentials) {
  const lines = portico.demoCredentials.map((c) => `  ${c.email.padEnd(24)} ${c.password.padEnd(20)} ${c.memberships}`);
  stdout.flush(); // the log lines of the start come first
  process.stdout.write(
    `\nDemo accounts (shown once; set DEMO=off to skip the demo, DEMO_PASSWORD to choose the password):\n${lines.join('\n')}\n\n`,
  );
}
log.info('portico listening', { url: portico.url, auth_url: config.authUrl, mcp_url: config.mcpUrl, api_url: config.apiUrl, database: config.database.kind });
// A signal that came once the server listened (while the demo was seeded): the start completed, now it stops.
if (stopping) shutDown(portico, exitStatusOf(stopping));

function stop(signal: NodeJS.Signals): void {
  if (stopping) {
    log.warn('a second signal: exiting now', { signal });
    process.exit(1);
  }
  stopping = signal;
  setTimeout(() => {
    log.error('shutdown did not finish in time: exiting', { deadline_ms: SHUTDOWN_DEADLINE_MS });
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  if (portico) {
    log.info('shutting down', { signal });
    shutDown(portico, 0);
  } else {
    log.info('stopping the start once its current step has finished', { signal });
    starting.abort(new Error(`${signal} during start-up`));
  }
}

function shutDown(running: Portico, status: number): void {
  running.close().then(
    () => process.exit(status),
    (error: unknown) => {
      log.error('shutdown failed', { err: error });
      process.exit(1);
    },
  );
}

/** A process stopped by a signal exits 128 + the signal's number, as a shell reports one it ended (SIGTERM 143, SIGINT 130). */
function exitStatusOf(signal: NodeJS.Signals): number {
  return 128 + os.constants.signals[signal];
}
