import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testOnEachDatabase } from '../helpers/db.js';
import { runAdmin } from '../../scripts/admin.js';
import { connectDatabase } from '../../db/connect.js';
import { migrateLatest } from '../../db/migrate.js';
import { issueAccessToken } from '../helpers/grants.js';
import { EXPORT_COLUMNS } from '../../db/audit_export.js';
import { PRODUCTS } from '../../mcp/products/index.js';

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

testOnEachDatabase('member commands add an existing user to another tenant, change roles and remove, keeping an administrator', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  await cli(url, ['tenant', 'create', 'globex', '--name', 'Globex']);
  await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin'], 'a long password');
  await cli(url, ['user', 'add', '--tenant', 'globex', '--email', 'boss@globex.example', '--role', 'admin', '--password-stdin'], 'a long password');

  const added = await cli(url, ['member', 'add', '--tenant', 'globex', '--email', 'OPS@acme.example', '--role', 'member']);
  t.is(added.code, 0, added.err);
  t.is(added.out, 'added ops@acme.example to globex as member');
  t.regex((await cli(url, ['user', 'list'])).out, /ops@acme\.example\s+acme:admin,globex:member/);

  // Refusals write nothing.
  const before = await counts(db);
  const again = await cli(url, ['member', 'add', '--tenant', 'globex', '--email', 'ops@acme.example', '--role', 'admin']);
  t.deepEqual([again.code, again.err], [1, 'error: the user is already a member of this tenant']);
  const nobody = await cli(url, ['member', 'add', '--tenant', 'globex', '--email', 'nobody@acme.example', '--role', 'member']);
  t.deepEqual([nobody.code, nobody.err], [3, 'error: no user nobody@acme.example (create one with user add)']);
  const notMember = await cli(url, ['member', 'remove', '--tenant', 'acme', '--email', 'boss@globex.example']);
  t.deepEqual([notMember.code, notMember.err], [3, 'error: the user is not a member of this tenant']);
  const lastAdmin = await cli(url, ['member', 'remove', '--tenant', 'acme', '--email', 'ops@acme.example']);
  t.deepEqual([lastAdmin.code, lastAdmin.err], [1, 'error: this is the last administrator of the tenant: make another member an administrator first']);
  const lastDemoted = await cli(url, ['member', 'role', '--tenant', 'globex', '--email', 'boss@globex.example', '--role', 'member']);
  t.is(lastDemoted.code, 1);
  const badRole = await cli(url, ['member', 'role', '--tenant', 'globex', '--email', 'boss@globex.example', '--role', 'owner']);
  t.deepEqual([badRole.code, badRole.err], [1, 'error: role must be admin or member, got "owner"']);
  const missing = await cli(url, ['member', 'role', '--tenant', 'globex', '--email', 'boss@globex.example']);
  t.is(missing.code, 2);
  t.regex(missing.err, /^error: member role needs --role\nusage: npm run admin -- member role --tenant/);
  const stray = await cli(url, ['member', 'remove', '--tenant', 'globex', '--email', 'ops@acme.example', '--role', 'admin']);
  t.is(stray.code, 2, 'member remove takes no --role');
  t.deepEqual(await counts(db), before);

  t.is((await cli(url, ['member', 'role', '--tenant', 'globex', '--email', 'ops@acme.example', '--role', 'admin'])).out, 'ops@acme.example is now admin in globex');
  t.is((await cli(url, ['member', 'role', '--tenant', 'globex', '--email', 'ops@acme.example', '--role', 'admin'])).out, 'ops@acme.example is already admin in globex');
  // Two administrators now: either may go.
  const removed = await cli(url, ['member', 'remove', '--tenant', 'globex', '--email', 'boss@globex.example']);
  t.deepEqual([removed.code, removed.out], [0, 'removed boss@globex.example from globex']);
  t.regex((await cli(url, ['user', 'list', '--tenant', 'globex'])).out, /^ops@acme\.example\s+globex:admin\s/);
  const globex = await db('tenants').where({ slug: 'globex' }).first('id');
  const names = (await db('audit_log').where({ tenant_id: globex.id, kind: 'admin' }).orderBy('seq').select('name')).map((r: { name: string }) => r.name);
  t.deepEqual(names, ['tenant.create', 'user.add', 'member.add', 'member.role', 'member.remove'], 'a no-op role change is not recorded');
});

testOnEachDatabase('two operators demoting the last two administrators at once: one wins, the other gets a clean conflict', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  for (const who of ['a', 'b']) await cli(url, ['user', 'add', '--tenant', 'acme', '--email', `${who}@acme.example`, '--role', 'admin', '--password-stdin'], 'a long password');
  for (let round = 0; round < 5; round += 1) {
    const results = await Promise.all(['a', 'b'].map((who) => cli(url, ['member', 'role', '--tenant', 'acme', '--email', `${who}@acme.example`, '--role', 'member'])));
    t.deepEqual(results.map((r) => r.code).sort(), [0, 1], JSON.stringify(results));
    t.is(results.find((r) => r.code === 1)!.err, 'error: this is the last administrator of the tenant: make another member an administrator first');
    const admins = await db('memberships').where({ role: 'admin' }).select('user_id');
    t.is(admins.length, 1, 'one administrator remains');
    await db('memberships').update({ role: 'admin' });
  }
});

testOnEachDatabase('user password refuses a missing option, an unknown user and a short password, and writes nothing', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin'], 'the first password');
  const hash = async () => (await db('users').where({ email: 'ops@acme.example' }).first()).password_hash;
  const before = { ...(await counts(db)), hash: await hash() };
  const noStdin = await cli(url, ['user', 'password', '--email', 'ops@acme.example'], 'another password');
  t.deepEqual([noStdin.code, noStdin.err.split('\n')[0]], [2, 'error: user password needs --password-stdin']);
  const nobody = await cli(url, ['user', 'password', '--email', 'nobody@acme.example', '--password-stdin'], 'another password');
  t.deepEqual([nobody.code, nobody.err], [3, 'error: no user nobody@acme.example']);
  const short = await cli(url, ['user', 'password', '--email', 'ops@acme.example', '--password-stdin'], 'short');
  t.deepEqual([short.code, short.err], [1, 'error: password must be at least 8 characters']);
  t.deepEqual({ ...(await counts(db)), hash: await hash() }, before);

  const done = await cli(url, ['user', 'password', '--email', 'ops@acme.example', '--password-stdin'], 'another password\n');
  t.deepEqual([done.code, done.out], [0, 'set a new password for ops@acme.example; ended 0 sign-in session(s)']);
  t.not(await hash(), before.hash);
});

testOnEachDatabase('tenant suspend and resume name one tenant and refuse anything else', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  const none = await cli(url, ['tenant', 'suspend']);
  t.deepEqual([none.code, none.err.split('\n')[0]], [2, 'error: tenant suspend needs a slug']);
  const two = await cli(url, ['tenant', 'resume', 'acme', 'globex']);
  t.deepEqual([two.code, two.err.split('\n')[0]], [2, 'error: tenant resume takes a slug, got 2 arguments']);
  const unknown = await cli(url, ['tenant', 'suspend', 'initech']);
  t.deepEqual([unknown.code, unknown.err], [3, 'error: no tenant "initech"']);
  t.is((await db('tenants').where({ slug: 'acme' }).first()).suspended_at, null);
  t.is((await cli(url, ['tenant', 'suspend', 'acme'])).out, 'suspended acme');
  t.is((await cli(url, ['tenant', 'resume', 'acme'])).out, 'resumed acme');

  // A suspension's one line names a few of what it revoked; the audit log names each.
  await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin'], 'a long password');
  const [tenant, user] = [await db('tenants').where({ slug: 'acme' }).first(), await db('users').where({ email: 'ops@acme.example' }).first()];
  for (let i = 0; i < 7; i += 1) await issueAccessToken(db, { tenantId: tenant.id, userId: user.id, product: 'forge', resource: 'http://127.0.0.1/mcp/forge', scopes: ['forge.chat.read'] });
  const many = await cli(url, ['tenant', 'suspend', 'acme']);
  t.regex(many.out, /^suspended acme; revoked 7 connection\(s\): (Test client → forge, ){4}Test client → forge and 2 more \(the audit log names each\)$/);
  t.is((await db('audit_log').where({ tenant_id: tenant.id, name: 'connection.revoke' })).length, 7);
  t.truthy((await db('tenants').where({ slug: 'acme' }).first()).suspended_at);
  t.regex((await cli(url, ['tenant', 'list'])).out, /^acme\s+Acme\s+1 member\(s\)\s+suspended\s/);
});

testOnEachDatabase('admin CLI usage errors exit 2 with the problem and the usage line, and write nothing', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  const before = await counts(db);
  const cases: Array<[string[], string, string]> = [
    [['tenant', 'create', 'initech'], 'error: tenant create needs --name', 'tenant create <slug> --name <name>'],
    [['tenant', 'create', '--name', 'Initech'], 'error: tenant create needs a slug', 'tenant create <slug> --name <name>'],
    [['tenant', 'create', 'initech', 'hooli', '--name', 'Initech'], 'error: tenant create takes a slug, got 2 arguments', 'tenant create <slug> --name <name>'],
    [['user', 'add', '--tenant', 'acme', '--email', 'b@acme.example', '--role', 'member'], 'error: user add needs --password-stdin', 'user add --tenant <slug>'],
    [['user', 'add', '--tenant', 'acme'], 'error: user add needs --email, --role, --password-stdin', 'user add --tenant <slug>'],
    [['surface', 'ship'], 'error: surface ship needs a product', 'surface ship <product>'],
    [['surface', 'ship', 'midas', 'forge'], 'error: surface ship takes a product, got 2 arguments', 'surface ship <product>'],
    [['audit', 'verify'], 'error: audit verify needs --tenant or --file', 'audit verify (--tenant <slug> | --file'],
    [['audit', 'export', '--tenant', 'acme', '--format', 'xml'], 'error: --format must be jsonl or csv, got "xml"', 'audit export --tenant <slug>'],
    // Unknown options and stray arguments are refused by every command, never ignored.
    [['tenant', 'list', '--bogus'], "error: Unknown option '--bogus'", 'tenant list'],
    [['tenant', 'list', 'acme'], "error: Unexpected argument 'acme'. This command does not take positional arguments", 'tenant list'],
    [['user', 'list', '--bogus'], "error: Unknown option '--bogus'", 'user list [--tenant <slug>]'],
    // `--tenant "$ORG"` with ORG unset: not every organization's people.
    [['user', 'list', '--tenant', ''], 'error: user list --tenant needs a slug', 'user list [--tenant <slug>]'],
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

test('a command given --help or -h prints its own usage, exits 0 and opens no database', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-help-'));
  const file = path.join(dir, 'portico.sqlite');
  try {
    for (const argv of [['tenant', 'create', '--help'], ['tenant', 'create', 'initech', '--name', 'Initech', '-h'], ['client', 'remove', '-h'], ['audit', 'export', '--help']]) {
      const help = await cli(`sqlite:${file}`, argv);
      t.deepEqual([help.code, help.err], [0, ''], argv.join(' '));
      t.regex(help.out, new RegExp(`^usage: npm run admin -- ${argv.slice(0, 2).join(' ')} `), argv.join(' '));
    }
    t.false(fs.existsSync(file), 'no database was created');
    // After `--` it is a value: here tenant create's slug, and the command still needs --name.
    const value = await cli(`sqlite:${file}`, ['tenant', 'create', '--', '--help']);
    t.is(value.code, 2);
    t.regex(value.err, /^error: tenant create needs --name\nusage: /);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

testOnEachDatabase('surface list prints a product a line, its status and tool count in aligned columns', async (t, { url }) => {
  const { code, out } = await cli(url, ['surface', 'list']);
  t.is(code, 0);
  const lines = out.split('\n');
  t.deepEqual(lines.map((line) => line.split(/\s+/)[0]), PRODUCTS.map((p) => p.id));
  for (const [i, p] of PRODUCTS.entries()) t.regex(lines[i], new RegExp(`^${p.id} +${p.status} +${p.tools.length} tools  ${p.title}$`));
  t.is(new Set(lines.map((line) => line.indexOf(' tools  '))).size, 1, `the counts end in one column:\n${out}`);
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
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 2);
  t.regex(stderr, /^error: invalid configuration: DATABASE_URL: expected sqlite:<path> or postgres/);
});

test('an unreachable database is one line on stderr and nothing on stdout, without knex\'s own copy and its stack (real process)', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/admin.ts', 'tenant', 'list'], {
    env: { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.on('data', (d) => (stdout += d));
  t.is(await new Promise<number | null>((resolve) => child.on('close', resolve)), 1);
  // oidc-provider's warning about Node 20 may come first; nothing else does (knex writes its own to stdout).
  t.deepEqual(stderr.split('\n').filter((line) => line && !line.startsWith('oidc-provider WARNING')), ['error: connect ECONNREFUSED 127.0.0.1:1']);
  t.is(stdout, '');
});

test('admin CLI with no arguments exits 2 (real process)', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/admin.ts'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  t.is(await new Promise<number | null>((resolve) => child.on('close', resolve)), 2);
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
    for (const argv of [['--file', ''], ['--file=  ']]) {
      const blank = await cli('sqlite::memory:', ['audit', 'verify', ...argv]);
      t.is(blank.code, 2, argv.join(' '));
      t.regex(blank.err, /^error: audit verify --file needs the path of an export\nusage: npm run admin -- audit verify /, argv.join(' '));
    }
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
    const only: { seq: number; hash: string } = JSON.parse((await cli(url, ['audit', 'export', '--tenant', 'acme'])).out);
    for (const format of ['jsonl', 'csv']) {
      const exported = await cli(url, ['audit', 'export', '--tenant', 'acme', '--format', format]);
      t.is(exported.code, 0, exported.err);
      const file = path.join(dir, `audit.${format}`);
      fs.writeFileSync(file, `${exported.out}\n`);
      const verified = await cli('sqlite::memory:', ['audit', 'verify', '--file', file]);
      t.is(verified.code, 0, verified.err);
      t.is(verified.out, `ok: 1 records verified\nchain end: 1:${only.hash}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a usage error opens no database: none is created at a mistyped path, and an unreachable one does not hide it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-cli-'));
  const filename = path.join(dir, 'typo', 'portico.sqlite');
  try {
    for (const argv of [['tenant', 'create'], ['tenant', 'suspend'], ['user', 'disable'], ['member', 'add', '--tenant', 'acme'], ['surface', 'ship'], ['keys', 'add', '--now'], ['client', 'add']]) {
      const local = await cli(`sqlite:${filename}`, argv);
      t.is(local.code, 2, `${argv.join(' ')}: ${local.err}`);
      t.regex(local.err, /^error: /, argv.join(' '));
      const unreachable = await cli('postgres://postgres@127.0.0.1:1/nothing', argv);
      t.is(unreachable.code, 2, `${argv.join(' ')} with the database down: ${unreachable.err}`);
      t.notRegex(unreachable.err, /ECONNREFUSED/, argv.join(' '));
    }
    t.false(fs.existsSync(filename), 'no database file was made');
    const down = await cli('postgres://postgres@127.0.0.1:1/nothing', ['tenant', 'list']);
    t.is(down.code, 1, 'a command that gets as far as the database reports it unreachable');
    t.is(down.err, 'error: connect ECONNREFUSED 127.0.0.1:1');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a command on a SQLite file that is not there creates none: the operator is told, and nothing reports success on an empty database', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-cli-'));
  const filename = path.join(dir, 'typo', 'portico.sqlite');
  try {
    for (const argv of [['tenant', 'list'], ['tenant', 'create', 'initech', '--name', 'Initech'], ['keys', 'list'], ['surface', 'ship', 'midas'], ['audit', 'verify', '--tenant', 'acme']]) {
      const missing = await cli(`sqlite:${filename}`, argv);
      t.is(missing.code, 1, argv.join(' '));
      t.is(missing.out, '', argv.join(' '));
      t.is(missing.err, `error: no database at ${filename}: set DATABASE_URL or DATA_DIR as the server has them, or create it with npm run migrate`, argv.join(' '));
    }
    t.false(fs.existsSync(path.dirname(filename)), 'neither the file nor its directory was made');

    // Where the server (or npm run migrate) made it, the same commands work.
    const made = connectDatabase({ kind: 'sqlite', filename });
    await migrateLatest(made);
    await made.destroy();
    t.is((await cli(`sqlite:${filename}`, ['tenant', 'create', 'initech', '--name', 'Initech'])).code, 0);
    t.regex((await cli(`sqlite:${filename}`, ['tenant', 'list'])).out, /^initech\s+Initech/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
