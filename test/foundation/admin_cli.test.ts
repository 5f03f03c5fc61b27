import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testOnEachDatabase } from '../helpers/db.js';
import { runAdmin } from '../../scripts/admin.js';
import { EXPORT_COLUMNS } from '../../db/audit_export.js';

function cli(url: string, argv: string[], stdin = '') {
  const out: string[] = [];
  const err: string[] = [];
  const run = runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l), stdin: async () => stdin }, { DATABASE_URL: url });
  return run.then((code) => ({ code, out: out.join('\n'), err: err.join('\n') }));
}

async function counts(db: import('knex').Knex) {
  const n = async (table: string) => Number((await db(table).count({ n: '*' }).first())?.n);
  return { tenants: await n('tenants'), users: await n('users'), memberships: await n('memberships'), audit: await n('audit_log') };
}

testOnEachDatabase('admin CLI creates tenants and users and lists them', async (t, { db, url }) => {
  t.is((await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme Corp'])).code, 0);
  const added = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'Ops@Acme.example', '--role', 'admin', '--password-stdin'], 'a long password\n');
  t.is(added.code, 0, added.err);
  t.is(added.out, 'added ops@acme.example to acme as admin');
  const tenants = await cli(url, ['tenant', 'list']);
  t.regex(tenants.out, /^acme\s+Acme Corp\s+1 member\(s\)/);
  const users = await cli(url, ['user', 'list']);
  t.regex(users.out, /ops@acme\.example\s+acme:admin/);
  t.deepEqual(await counts(db), { tenants: 1, users: 1, memberships: 1, audit: 2 });
});

testOnEachDatabase('admin CLI errors are clear, exit non-zero and write nothing', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'a@acme.example', '--role', 'member', '--password-stdin'], 'password-one');
  const before = await counts(db);

  const duplicate = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'A@acme.example', '--role', 'member', '--password-stdin'], 'password-two');
  t.is(duplicate.code, 1);
  t.is(duplicate.err, 'error: user a@acme.example already exists');

  const unknownTenant = await cli(url, ['user', 'add', '--tenant', 'initech', '--email', 'b@acme.example', '--role', 'member', '--password-stdin'], 'password-two');
  t.not(unknownTenant.code, 0);
  t.is(unknownTenant.err, 'error: no tenant "initech"');

  const wrongRole = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'c@acme.example', '--role', 'owner', '--password-stdin'], 'password-two');
  t.not(wrongRole.code, 0);
  t.is(wrongRole.err, 'error: role must be admin or member, got "owner"');

  const duplicateTenant = await cli(url, ['tenant', 'create', 'acme', '--name', 'Again']);
  t.is(duplicateTenant.err, 'error: tenant "acme" already exists');

  const shortPassword = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'd@acme.example', '--role', 'member', '--password-stdin'], 'short');
  t.is(shortPassword.err, 'error: password must be at least 8 characters');

  const unknown = await cli(url, ['frobnicate']);
  t.is(unknown.code, 2);
  t.regex(unknown.err, /^error: unknown command "frobnicate"\n\nusage: npm run admin -- <command>/);

  const unknownTenantList = await cli(url, ['user', 'list', '--tenant', 'initech']);
  t.is(unknownTenantList.code, 3, 'a named thing that does not exist');
  t.is(unknownTenantList.err, 'error: no tenant "initech"');

  t.deepEqual(await counts(db), before);
});

testOnEachDatabase('admin CLI usage errors exit 2 with the problem and the usage line, and write nothing', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  const before = await counts(db);
  const cases: Array<[string[], string, string]> = [
    [['tenant', 'create', 'initech'], 'error: tenant create needs --name', 'tenant create <slug> --name <name>'],
    [['tenant', 'create', '--name', 'Initech'], 'error: tenant create needs a slug', 'tenant create <slug> --name <name>'],
    [['user', 'add', '--tenant', 'acme', '--email', 'b@acme.example', '--role', 'member'], 'error: user add needs --password-stdin', 'user add --tenant <slug>'],
    [['user', 'add', '--tenant', 'acme'], 'error: user add needs --email, --role, --password-stdin', 'user add --tenant <slug>'],
    [['surface', 'ship'], 'error: surface ship needs a product', 'surface ship <product>'],
    [['surface', 'ship', 'midas', 'forge'], 'error: surface ship takes one product, got 2', 'surface ship <product>'],
    [['audit', 'verify'], 'error: audit verify needs --tenant or --file', 'audit verify (--tenant <slug> | --file'],
    [['audit', 'export', '--tenant', 'acme', '--format', 'xml'], 'error: --format must be jsonl or csv, got "xml"', 'audit export --tenant <slug>'],
    // Unknown options and stray arguments are refused by every command, never ignored.
    [['tenant', 'list', '--bogus'], "error: Unknown option '--bogus'", 'tenant list'],
    [['tenant', 'list', 'acme'], "error: Unexpected argument 'acme'. This command does not take positional arguments", 'tenant list'],
    [['user', 'list', '--bogus'], "error: Unknown option '--bogus'", 'user list [--tenant <slug>]'],
    [['surface', 'list', '--all'], "error: Unknown option '--all'", 'surface list'],
    [['client', 'add', '--name', 'X', '--redirect-uri', 'http://127.0.0.1/cb', '--bogus'], "error: Unknown option '--bogus'", 'client add --name <name>'],
    [['client', 'list', '--bogus'], "error: Unknown option '--bogus'", 'client list [--all]'],
  ];
  for (const [argv, problem, usage] of cases) {
    const result = await cli(url, argv);
    t.is(result.code, 2, argv.join(' '));
    t.is(result.out, '', argv.join(' '));
    const [first, second, ...more] = result.err.split('\n');
    t.is(first, problem, argv.join(' '));
    t.true(second.startsWith(`usage: npm run admin -- ${usage}`), `${argv.join(' ')}: ${second}`);
    t.deepEqual(more, [], argv.join(' '));
  }
  t.deepEqual(await counts(db), before);
});

test('admin CLI with no arguments is a usage error; help prints the commands and exits 0', async (t) => {
  const none = await cli('sqlite::memory:', []);
  t.is(none.code, 2);
  t.is(none.out, '');
  t.regex(none.err, /^error: no command given\n\nusage: npm run admin -- <command>\n/);
  for (const argv of [['help'], ['--help'], ['-h']]) {
    const help = await cli('sqlite::memory:', argv);
    t.is(help.code, 0, argv[0]);
    t.regex(help.out, /^usage: npm run admin -- <command>\n[\s\S]*  tenant create <slug> --name <name>/, argv[0]);
    t.is(help.err, '', argv[0]);
  }
});

test('admin CLI configuration errors exit 2 and name the variable', async (t) => {
  const port = await runAdmin(['tenant', 'list'], { out: () => undefined, err: (l) => t.is(l, 'error: invalid configuration: PORT: expected a whole number, got "x"') }, { DATABASE_URL: 'sqlite::memory:', PORT: 'x' });
  t.is(port, 2);
});

test('admin CLI refuses a bad DATABASE_URL, naming it, with exit 2 (real process)', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/admin.ts', 'tenant', 'list'], {
    env: { ...process.env, DATABASE_URL: 'mysql://nope' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.is(code, 2);
  t.regex(stderr, /^error: invalid configuration: DATABASE_URL: expected sqlite:<path> or postgres/);
});

test('admin CLI with no arguments exits 2 (real process)', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/admin.ts'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  t.is(await new Promise<number | null>((resolve) => child.on('exit', resolve)), 2);
  t.regex(stderr, /^error: no command given/);
});

test('audit verify --file refuses an empty export and a CSV header alone: nothing was verified', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-verify-'));
  try {
    const empty = path.join(dir, 'empty.jsonl');
    fs.writeFileSync(empty, '');
    const headerOnly = path.join(dir, 'header.csv');
    fs.writeFileSync(headerOnly, `${EXPORT_COLUMNS.join(',')}\r\n`);
    for (const file of [empty, headerOnly, '/dev/null']) {
      const result = await cli('sqlite::memory:', ['audit', 'verify', '--file', file]);
      t.is(result.code, 1, file);
      t.is(result.out, '', file);
      t.is(result.err, `error: ${file} holds no audit records (an empty file or a CSV header only): nothing was verified`);
    }
    const missing = await cli('sqlite::memory:', ['audit', 'verify', '--file', path.join(dir, 'nope.jsonl')]);
    t.is(missing.code, 1);
    t.regex(missing.err, /^error: cannot read .*nope\.jsonl: ENOENT/);
    const both = await cli('sqlite::memory:', ['audit', 'verify', '--file', empty, '--tenant', 'acme']);
    t.is(both.code, 2);
    t.regex(both.err, /^error: audit verify takes --tenant or --file, not both\nusage: /);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

testOnEachDatabase('audit verify --file accepts a real export of one record', async (t, { url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-verify-'));
  try {
    for (const format of ['jsonl', 'csv']) {
      const exported = await cli(url, ['audit', 'export', '--tenant', 'acme', '--format', format]);
      t.is(exported.code, 0, exported.err);
      const file = path.join(dir, `audit.${format}`);
      fs.writeFileSync(file, `${exported.out}\n`);
      const verified = await cli('sqlite::memory:', ['audit', 'verify', '--file', file]);
      t.is(verified.code, 0, verified.err);
      t.is(verified.out, 'ok: 1 records verified');
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
