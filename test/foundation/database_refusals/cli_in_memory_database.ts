/**
 * `DATABASE_URL=sqlite::memory:` names a database that is thrown away when the process exits. The
 * one-shot commands refuse it (shared/config.ts requireKeptDatabase): `npm run admin -- tenant
 * create` would otherwise say it created a tenant that nothing keeps, and `npm run migrate` that it
 * migrated a database nobody will open. The server may run on one; it is not refused there.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runScript } from '../../helpers/script.js';

const REFUSAL = 'error: invalid configuration: DATABASE_URL: sqlite::memory: is an in-memory database, which is not kept when the command exits: write the path of a file (sqlite:/path/to/file), or leave DATABASE_URL unset for $DATA_DIR/portico.sqlite';

test('npm run admin and npm run migrate refuse an in-memory SQLite database in one line, exit 2 and write nothing (real processes)', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-memory-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = { DATABASE_URL: 'sqlite::memory:', DATA_DIR: dataDir };

  for (const [script, args] of [
    ['scripts/admin.ts', ['tenant', 'create', 'acme', '--name', 'Acme']],
    ['scripts/admin.ts', ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin']],
    ['scripts/admin.ts', ['tenant', 'list']],
    ['scripts/migrate.ts', []],
  ] as const) {
    const result = await runScript(script, args, env, 'a long password\n');
    const what = `${script} ${args.join(' ')}`;
    t.is(result.code, 2, `${what}: ${result.stderr.join('\n')}`);
    t.deepEqual(result.stderr, [REFUSAL], what);
    t.is(result.stdout, '', what);
  }
  t.deepEqual(fs.readdirSync(dataDir), [], 'nothing was written under DATA_DIR');
  t.false(fs.existsSync(':memory:'), 'nor a file named :memory: in the working directory');
});

test('npm start still runs on an in-memory SQLite database: it lives as long as the server (real process)', async (t) => {
  t.timeout(60_000);
  const child = spawn(process.execPath, ['--import=tsx', 'main.ts'], {
    env: { ...process.env, DATABASE_URL: 'sqlite::memory:', PORT: '0', HOST: '127.0.0.1', PUBLIC_AUTH_URL: 'http://127.0.0.1:1', DEMO: 'off', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const listening = new Promise<boolean>((resolve) => {
    child.stdout.on('data', (d) => {
      output += d;
      if (output.includes('"msg":"portico listening"')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  t.true(await listening, output);
  child.kill('SIGTERM');
  t.is(await exited, 0, output);
});
