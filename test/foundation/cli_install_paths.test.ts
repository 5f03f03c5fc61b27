/**
 * The command-line scripts (`npm run admin`, `npm run client-config`, `npm run docs:products`) run
 * wherever Portico is installed: in a folder whose name has a space (`/opt/Acme Portico`), and
 * through a symbolic link to a release (`/srv/portico/current -> releases/1.4`). Each script runs
 * only when it is the process's entry point; a check that compared the path node was given with
 * the module's URL as strings did nothing there and exited 0, so `tenant create` said nothing,
 * created nothing, and reported success.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT as ROOT } from '../../scripts/project_root.js';
import { createMigratedDatabase } from '../helpers/db.js';

/**
 * Runs the compiled `root/dist/scripts/<script>` by its full path from `root`, as a cron job or a
 * service unit names it. Compiled, not through tsx (as npm run runs them): the check is the same
 * in both, and tsx would compile every import afresh in each child (tens of seconds here).
 */
function run(root: string, script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'dist', 'scripts', script.replace(/\.ts$/, '.js')), ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A copy of the compiled scripts and what they import, in a folder whose name has a space; its node_modules a link to ours. */
function installWithSpace(t: { teardown(fn: () => void): void }): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'portico install-'));
  t.teardown(() => fs.rmSync(parent, { recursive: true, force: true }));
  const root = path.join(parent, 'Acme Portico');
  fs.cpSync(path.join(ROOT, 'package.json'), path.join(root, 'package.json'));
  for (const part of ['scripts', 'shared', 'db', 'auth', 'mcp']) fs.cpSync(path.join(ROOT, 'dist', part), path.join(root, 'dist', part), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  return root;
}

/** This checkout reached through a symbolic link, as a deployment's `current` release is. */
function linkedInstall(t: { teardown(fn: () => void): void }): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-release-'));
  t.teardown(() => fs.rmSync(parent, { recursive: true, force: true }));
  const current = path.join(parent, 'current');
  fs.symlinkSync(ROOT, current);
  return current;
}

for (const [where, install] of [['a folder whose name has a space', installWithSpace], ['a release reached through a symbolic link', linkedInstall]] as const) {
  test(`the scripts run from ${where}`, async (t) => {
    t.timeout(120_000);
    const root = install(t);
    const [help, unknown, config, products] = await Promise.all([
      run(root, 'admin.ts', ['--help']),
      run(root, 'admin.ts', ['tenant', 'craete', 'initech']),
      run(root, 'client_config.ts', ['--help']),
      run(root, 'products_doc.ts', ['--help']),
    ]);
    t.is(help.code, 0, help.stderr);
    t.regex(help.stdout, /usage: npm run admin -- <command>/);
    t.is(unknown.code, 2, 'a mistyped command is a usage error, not a success');
    t.regex(unknown.stderr, /unknown command "tenant craete initech"/);
    t.is(config.code, 0, config.stderr);
    t.regex(config.stdout, /usage: npm run client-config/);
    t.is(products.code, 0, products.stderr);
    t.regex(products.stdout, /usage: npm run docs:products/);
  });
}

test('npm run admin -- tenant create, run through a linked release, creates the tenant it reports', async (t) => {
  t.timeout(120_000);
  const database = await createMigratedDatabase('sqlite');
  t.teardown(() => database.drop());
  const root = linkedInstall(t);
  const result = await run(root, 'admin.ts', ['tenant', 'create', 'initech', '--name', 'Initech'], { DATABASE_URL: database.url });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^created tenant initech /);
  t.truthy(await database.db('tenants').where({ slug: 'initech' }).first(), 'the tenant is in the database');
});
