/**
 * `npm run migrate` checks its arguments before it opens (or creates) any database, as `npm run
 * admin` and `npm run client-config` do: `--help` prints the usage, anything else exits 2.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import=tsx', 'scripts/migrate.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('npm run migrate -- --help prints its usage, exits 0 and touches no database', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-migrate-'));
  const file = path.join(dir, 'portico.sqlite');
  const result = await run(['--help'], { DATABASE_URL: `sqlite:${file}` });
  t.is(result.code, 0);
  t.regex(result.stdout, /usage: npm run migrate/);
  t.false(fs.existsSync(file), 'no database was created or migrated');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('npm run migrate with an unknown option or argument exits 2 with its usage and touches no database', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-migrate-'));
  const file = path.join(dir, 'portico.sqlite');
  for (const args of [['--dry-run'], ['latest']]) {
    const result = await run(args, { DATABASE_URL: `sqlite:${file}` });
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, /usage: npm run migrate/);
  }
  t.false(fs.existsSync(file), 'no database was created or migrated');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('npm run migrate without arguments still applies the migrations', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-migrate-'));
  const file = path.join(dir, 'portico.sqlite');
  const result = await run([], { DATABASE_URL: `sqlite:${file}` });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^applied: /);
  t.true(fs.existsSync(file));
  fs.rmSync(dir, { recursive: true, force: true });
});
