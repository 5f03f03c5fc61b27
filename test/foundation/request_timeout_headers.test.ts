/**
 * REQUEST_TIMEOUT_MS is the time allowed to receive a whole request, headers included (README,
 * "Configuration"): headers sent slowly are accepted for as long as it allows, not cut at Node's
 * 30 s whatever it says. Slower headers are still cut off (test/security/mcp_transport.test.ts).
 */
import test from 'ava';
import { startTestServer } from '../helpers/server.js';
import { trickle } from '../security/support.js';

test('request headers trickled for 38 s are answered when REQUEST_TIMEOUT_MS allows 45 s', async (t) => {
  t.timeout(90_000);
  const server = await startTestServer('sqlite', { env: { REQUEST_TIMEOUT_MS: '45000' }, mounts: [] });
  try {
    const { host } = new URL(server.url);
    const request = `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Padding: ${'p'.repeat(40)}\r\nConnection: close\r\n\r\n`;
    // Longer than 30 s and than Node's first check past it (every REQUEST_TIMEOUT_MS / 4, app.ts).
    const slow = await trickle(server.url, '', request, Math.ceil(38_000 / request.length));
    t.true(slow.finished, `cut off after ${slow.sent} of ${request.length} bytes: ${slow.answer}`);
    t.regex(slow.answer, /^HTTP\/1\.1 200 OK\r\n/);
  } finally {
    await server.close();
  }
});
