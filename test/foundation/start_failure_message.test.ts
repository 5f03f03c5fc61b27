/**
 * A start that fails names the right variable: a database host that does not resolve (ENOTFOUND
 * while migrating) is a DATABASE_URL problem, not "cannot listen on HOST:PORT", which is kept for
 * failures of listen itself.
 */
import { spawn } from 'node:child_process';
import test from 'ava';

test('a DATABASE_URL whose host does not resolve is not reported as a HOST/listen problem (real process)', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'main.ts'], {
    env: { ...process.env, DATABASE_URL: 'postgres://postgres@db.invalid:5432/portico', PORT: '18779', HOST: '127.0.0.1', DEMO: 'off', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 1);
  t.notRegex(output, /cannot listen on/, output);
  t.notRegex(output, /HOST does not resolve/, output);
});
