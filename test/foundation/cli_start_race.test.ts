/**
 * The operator CLI migrates in turn with instances starting on the same PostgreSQL (the advisory
 * lock of db/migrate.ts exclusively): an admin command run while an instance starts on a new
 * database (an init job creating the first tenant beside the replicas) lets both succeed.
 */
import test from 'ava';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/log.js';
import { startPortico } from '../../app.js';
import { defaultMounts } from '../../mounts.js';
import { runAdmin } from '../../scripts/admin.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { freePort } from '../helpers/server.js';

const pgTest = databasesUnderTest().includes('postgres') ? test : test.skip;

pgTest('an admin command and an instance started together on an empty PostgreSQL database both succeed [postgres]', async (t) => {
  t.timeout(120_000);
  const failures: string[] = [];
  for (let round = 0; round < 5; round++) {
    const database = await createTestDatabase('postgres');
    const port = await freePort();
    const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: `http://127.0.0.1:${port}`, DATABASE_URL: database.url, LOG_LEVEL: 'silent', DEMO: 'off' });
    const err: string[] = [];
    const [started, cli] = await Promise.allSettled([
      startPortico(config, { log: createLogger('silent'), mounts: defaultMounts() }),
      runAdmin(['tenant', 'list'], { out: () => undefined, err: (line) => err.push(line) }, { DATABASE_URL: database.url }),
    ]);
    if (started.status === 'rejected') failures.push(`round ${round}: the instance failed to start: ${(started.reason as Error).message}`);
    else await started.value.close();
    if (cli.status === 'fulfilled' && cli.value !== 0) failures.push(`round ${round}: the admin command failed: ${err.join(' ')}`);
    await database.drop();
  }
  t.deepEqual(failures, []);
});
