import test from 'ava';
import { spawn } from 'node:child_process';
import { testOnEachDatabase } from '../helpers/db.js';
import { runAdmin } from '../../scripts/admin.js';

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

  const usage = await cli(url, ['user', 'add', '--tenant', 'acme']);
  t.is(usage.code, 1);
  t.regex(usage.err, /^usage: user add --tenant <slug>/);

  const unknown = await cli(url, ['frobnicate']);
  t.is(unknown.code, 2);
  t.regex(unknown.err, /unknown command "frobnicate"/);

  t.deepEqual(await counts(db), before);
});

test('admin CLI refuses a bad DATABASE_URL, naming it (real process)', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'scripts/admin.ts', 'tenant', 'list'], {
    env: { ...process.env, DATABASE_URL: 'mysql://nope' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.is(code, 1);
  t.regex(stderr, /invalid configuration: DATABASE_URL: expected sqlite:<path> or postgres/);
});
