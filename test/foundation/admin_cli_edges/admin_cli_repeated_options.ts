/**
 * An operator CLI option that takes one value, given twice, is a usage error (exit 2, the usage
 * line, nothing written), as the console refuses a query parameter given twice: before, node's
 * parseArgs kept the last value and dropped the first without a word, so `user disable --email a
 * --email b` disabled b alone and `user add … --email a … --email b` created b. Options that take
 * several values (`client add --redirect-uri`) still do.
 */
import { testOnEachDatabase } from '../../helpers/db.js';
import { runAdmin } from '../../../scripts/admin.js';

function cli(url: string, argv: string[], stdin = '') {
  const out: string[] = [];
  const err: string[] = [];
  return runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l), stdin: async () => stdin }, { DATABASE_URL: url })
    .then((code) => ({ code, out: out.join('\n'), err: err.join('\n') }));
}

testOnEachDatabase('an admin CLI option given twice is a usage error that names it, and nothing is written', async (t, { db, url }) => {
  t.is((await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme'])).code, 0);
  t.is((await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'a@acme.example', '--role', 'admin', '--password-stdin'], 'a long password')).code, 0);
  t.is((await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'b@acme.example', '--role', 'admin', '--password-stdin'], 'a long password')).code, 0);
  const snapshot = async () => ({
    users: await db('users').orderBy('email').select('email', 'disabled_at'),
    memberships: await db('memberships').orderBy('user_id').select('user_id', 'role'),
    tenants: await db('tenants').orderBy('slug').select('slug', 'name'),
    audit: Number((await db('audit_log').count({ n: '*' }).first())?.n),
  });
  const before = await snapshot();

  const cases: Array<[string[], string]> = [
    [['user', 'add', '--tenant', 'acme', '--email', 'c@acme.example', '--role', 'member', '--password-stdin', '--email', 'd@acme.example'], 'email'],
    [['user', 'disable', '--email', 'a@acme.example', '--email=b@acme.example'], 'email'],
    [['member', 'role', '--tenant', 'acme', '--email', 'a@acme.example', '--role', 'admin', '--role', 'member'], 'role'],
    [['tenant', 'create', 'initech', '--name', 'Initech', '--name', 'Initrode'], 'name'],
  ];
  for (const [argv, option] of cases) {
    const result = await cli(url, argv, 'a long password');
    const label = argv.join(' ');
    t.is(result.code, 2, `${label}: ${result.out || result.err}`);
    t.is(result.err.split('\n')[0], `error: --${option} may be given once`, label);
    t.regex(result.err, /\nusage: npm run admin -- /, label);
  }
  t.deepEqual(await snapshot(), before);

  const twoUris = await cli(url, ['client', 'add', '--name', 'Two callbacks', '--redirect-uri', 'http://127.0.0.1/a', '--redirect-uri', 'http://127.0.0.1/b']);
  t.is(twoUris.code, 0, twoUris.err);
});
