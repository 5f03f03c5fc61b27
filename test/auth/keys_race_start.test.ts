/**
 * An instance takes up its keys before it writes its row in `instances`. A keys step that commits
 * in between would not see it: the instance's registration re-reads the rings under the lock a
 * keys step takes, and its start fails ("start it again") if they changed, so no instance runs
 * with keys older than a step that passed its guard.
 */
import test from 'ava';
import type { Mount } from '../../app.js';
import { liveInstances } from '../../db/instances.js';
import { defaultMounts } from '../../mounts.js';
import { runAdmin } from '../../scripts/admin.js';
import { createTestDatabase, databasesUnderTest } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';

for (const kind of databasesUnderTest()) {
  test(`keys rotate during a second instance's start is refused, as for two running instances [${kind}]`, async (t) => {
    const database = await createTestDatabase(kind);
    const first = await startTestServer(kind, { database });
    let second: Awaited<ReturnType<typeof startTestServer>> | undefined;
    try {
      let rotate: { code: number; err: string } | undefined;
      // The operator's `keys rotate`, run while the second instance starts: after it read its keys,
      // before the rest of its start (a real start spends this time on the event relay, the
      // surfaces, the MCP host and the provider).
      const operator: Mount = async () => {
        const err: string[] = [];
        const code = await runAdmin(['keys', 'rotate'], { out: () => undefined, err: (line) => err.push(line) }, { DATABASE_URL: database.url });
        rotate = { code, err: err.join('\n') };
      };
      const started = await startTestServer(kind, { database, mounts: [operator, ...defaultMounts()] }).then((server) => ({ server, error: undefined }), (error: unknown) => ({ server: undefined, error }));
      second = started.server;
      t.truthy(rotate, 'the operator step ran');
      // Either the rotation is refused (two instances), or the second instance does not run on the keys it read before it.
      const running = await liveInstances(first.portico.context.db);
      t.false(rotate?.code === 0 && started.server !== undefined,
        `keys rotate went through (exit ${rotate?.code}) although ${running.length} instances now run, the second with the keys it read before the rotation`);
    } finally {
      await second?.stop();
      await first.stop();
      await database.drop();
    }
  });
}
