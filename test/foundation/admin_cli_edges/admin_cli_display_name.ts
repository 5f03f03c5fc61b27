/**
 * `user add --name` longer than the users table holds (200 characters) is refused the same way
 * on both databases, with a message that says so: before, SQLite stored it whole and PostgreSQL
 * failed the command as "internal error".
 */
import { testOnEachDatabase } from '../../helpers/db.js';
import { runAdmin } from '../../../scripts/admin.js';

function cli(url: string, argv: string[], stdin = '') {
  const err: string[] = [];
  return runAdmin(argv, { out: () => undefined, err: (l) => err.push(l), stdin: async () => stdin }, { DATABASE_URL: url }).then((code) => ({ code, err: err.join('\n') }));
}

testOnEachDatabase('user add refuses a display name over 200 characters on every database, and writes nothing', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  const long = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin', '--name', 'n'.repeat(201)], 'a long password');
  t.deepEqual([long.code, long.err], [1, 'error: display name must be at most 200 characters']);
  t.is(Number((await db('users').count({ n: '*' }).first())?.n), 0);

  const fits = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin', '--name', 'n'.repeat(200)], 'a long password');
  t.is(fits.code, 0, fits.err);
  t.is((await db('users').first('display_name')).display_name, 'n'.repeat(200));
});
