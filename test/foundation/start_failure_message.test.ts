/**
 * A start that fails says why in the operator's terms. A database host that does not resolve
 * (ENOTFOUND while migrating) is a DATABASE_URL problem, not "cannot listen on HOST:PORT", which
 * is kept for failures of listen itself; a database that refuses is named as the admin CLI names
 * it (db/errors.ts describeDatabaseFailure), with the driver's line beside it and no stack.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { runScript } from '../helpers/script.js';

/** `npm start`'s main.ts as a real process; its exit code and everything it printed. */
async function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import=tsx', 'main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', PUBLIC_AUTH_URL: 'http://127.0.0.1:1', DEMO: 'off', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

test('a DATABASE_URL whose host does not resolve is not reported as a HOST/listen problem (real process)', async (t) => {
  const { code, output } = await start({ DATABASE_URL: 'postgres://postgres@db.invalid:5432/portico' });
  t.is(code, 1);
  t.notRegex(output, /cannot listen on/, output);
  t.notRegex(output, /HOST does not resolve/, output);
});

test('a DATABASE_URL naming a file that is not a SQLite database fails the start in Portico\'s words, without a stack (real process)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-notadb-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'portico.sqlite');
  fs.writeFileSync(file, 'this is a text file, not a database\n'.repeat(200));
  const { code, output } = await start({ DATABASE_URL: `sqlite:${file}` });
  t.is(code, 1, output);
  const failure = output.split('\n').find((line) => line.includes('"level":"error"'));
  t.truthy(failure, output);
  const record = JSON.parse(failure!) as { msg: string; detail?: string };
  t.is(record.msg, 'start failed: the file of DATABASE_URL is not a SQLite database (SQLITE_NOTADB)');
  t.is(record.detail, 'file is not a database');
  t.notRegex(output, /\bat .*\.js:\d+/, 'no stack');
});

test('a DATA_DIR naming a file is a configuration error that names DATA_DIR and the path, without a stack: npm start, npm run admin and npm run migrate exit 2 (real processes)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-datadir-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'data');
  fs.writeFileSync(file, 'not a directory\n');
  const problem = `DATA_DIR: ${file} is a file, not a directory: DATA_DIR must name a directory (made if missing), where the embedded SQLite database is kept`;

  const { code, output } = await start({ DATA_DIR: file, DATABASE_URL: '' });
  t.is(code, 2, output);
  t.deepEqual(output.split('\n').filter((line) => line && !line.startsWith('oidc-provider WARNING')), [`portico: invalid configuration: ${problem}`]);

  for (const [script, args] of [['scripts/admin.ts', ['tenant', 'list']], ['scripts/migrate.ts', []]] as const) {
    const result = await runScript(script, args, { DATA_DIR: file, DATABASE_URL: '' });
    t.is(result.code, 2, `${script}: ${result.stderr.join('\n')}`);
    t.deepEqual(result.stderr, [`error: invalid configuration: ${problem}`], script);
    t.is(result.stdout, '', script);
  }
  t.deepEqual(fs.readdirSync(dir), ['data'], 'nothing was made beside it');
  t.is(fs.readFileSync(file, 'utf8'), 'not a directory\n');
});
