/** Starts a real Portico on 127.0.0.1 with a fresh database, for end-to-end tests. */
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { loadConfig, type Config } from '../../shared/config.js';
import { createLogger, type Logger } from '../../shared/log.js';
import { startPortico, type Mount, type Portico } from '../../app.js';
import { defaultMounts } from '../../mounts.js';
import { createTestDatabase, type DbKind, type TestDatabase } from './db.js';
import { leakedSecrets } from './secrets.js';

/**
 * A port that is free now and that the kernel will not hand out by itself: it lies below the
 * ephemeral range, from which every `listen(0)` and every outgoing connection of the other test
 * workers takes its port. A test that stops a server and starts another on the same port (a
 * restart keeps its public URL) would otherwise lose it, now and then, to one of those.
 */
export async function freePort(): Promise<number> {
  const [lowest, highest] = [10_000, ephemeralLow() - 1];
  for (let attempt = 1; ; attempt += 1) {
    const port = randomInt(lowest, highest + 1);
    if (await bindable(port)) return port;
    if (attempt === 100) throw new Error(`no free port between ${lowest} and ${highest} in 100 tries`);
  }
}

/** The kernel's first ephemeral port: Linux says in /proc; elsewhere 32768 is below the usual range. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 11_000) return low;
  } catch {
    // Not Linux.
  }
  return 32_768;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface TestServer {
  portico: Portico;
  url: string;
  config: Config;
  database: TestDatabase;
  logs: string[];
  /** Stops the server and keeps the database (for restart tests). */
  stop(): Promise<void>;
  /** Stops the server and drops the database. */
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  /** A database the caller owns (close keeps it); by default the server makes one of its own and drops it. */
  database?: TestDatabase;
  /** How the server makes its own database: migrated, with signing keys (as a restart finds it), unless this says otherwise. */
  newDatabase?: (kind: DbKind) => Promise<TestDatabase>;
  mounts?: Mount[];
}

export async function startTestServer(kind: DbKind, options: TestServerOptions = {}): Promise<TestServer> {
  // Migrated, with signing keys (from a template): the start finds what a restart finds.
  const database = options.database ?? (await (options.newDatabase?.(kind) ?? createTestDatabase(kind, { migrated: true, signingKeys: true })));
  // The port is free when picked but another worker may take it before Portico listens: pick again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOn(await freePort(), database, options);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt === 5) {
        if (!options.database) await database.drop();
        throw error;
      }
    }
  }
}

async function startOn(port: number, database: TestDatabase, options: TestServerOptions): Promise<TestServer> {
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_AUTH_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: database.url,
    DEMO: 'off',
    LOG_LEVEL: 'info',
    ...options.env,
  });
  const logs: string[] = [];
  const log: Logger = createLogger(config.logLevel, (line) => logs.push(line));
  const portico = await startPortico(config, { log, mounts: options.mounts ?? defaultMounts() });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await portico.close();
    // Every test server is part of the suite-wide scan for secrets in logs (test/helpers/secrets.ts).
    const leaks = leakedSecrets(logs);
    if (leaks.length) throw new Error(`secrets reached the log: ${JSON.stringify(leaks)}`);
  };
  return {
    portico, url: portico.url, config, database, logs, stop,
    close: async () => {
      await stop();
      if (!options.database) await database.drop();
    },
  };
}
