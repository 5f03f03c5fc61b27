import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startTestServer } from '../../helpers/server.js';
import { rememberSecret } from '../../helpers/secrets.js';

// The suite-wide scan (test/helpers/secrets.ts) must be able to fail: a remembered secret that
// reaches a log line makes the server's stop throw, naming the line.
test('a test server refuses to stop quietly when a known secret reached its log', async (t) => {
  const server = await startTestServer('sqlite');
  const secret = randomBytes(24).toString('base64url');
  rememberSecret(secret);
  await (await fetch(`${server.url}/no-such-page/${secret}`)).text(); // the request log names the path
  const error = await t.throwsAsync(server.stop());
  t.regex(error!.message, /secrets reached the log/);
  t.regex(error!.message, /no-such-page/);
  await server.database.drop();
});
