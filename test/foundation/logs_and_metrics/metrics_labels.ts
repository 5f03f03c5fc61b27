/**
 * /metrics must stay bounded whatever callers send: a label value per path a caller made up
 * (a series per random first segment) would let anyone grow the server's memory and every
 * scrape without limit.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { databasesUnderTest } from '../../helpers/db.js';
import { startTestServer } from '../../helpers/server.js';

/** The distinct `route` values of the HTTP request histogram. */
function routesOf(metrics: string): Set<string> {
  const routes = new Set<string>();
  for (const match of metrics.matchAll(/^portico_http_request_duration_seconds_count\{[^}]*route="([^"]*)"/gm)) routes.add(match[1]);
  return routes;
}

for (const kind of databasesUnderTest()) {
  test(`requests for made-up paths add no route label per path [${kind}]`, async (t) => {
    const server = await startTestServer(kind);
    try {
      const before = routesOf(await (await fetch(`${server.url}/metrics`)).text());
      const made = Array.from({ length: 40 }, () => `/${randomBytes(8).toString('hex').replace(/[0-9]/g, 'x')}`);
      for (const path of made) {
        const response = await fetch(`${server.url}${path}/anything`);
        t.is(response.status, 404);
        await response.arrayBuffer();
      }
      // Other statuses on unclaimed paths (a wrong method, U+0000) must not make series either.
      for (const path of made.slice(0, 5)) await (await fetch(`${server.url}${path}/%00`)).arrayBuffer();
      const after = routesOf(await (await fetch(`${server.url}/metrics`)).text());
      const added = [...after].filter((route) => !before.has(route) && route !== '/metrics');
      t.true(added.length <= 2, `made-up paths added ${added.length} route labels: ${added.slice(0, 5).join(', ')} …`);
      t.false(made.some((path) => after.has(path)), 'no made-up path is a label value');
    } finally {
      await server.close();
    }
  });
}
