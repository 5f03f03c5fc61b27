/**
 * An organization's name and a person's display name, which the operator CLI stores and the
 * consent page, the console and the products' prompts show as stored, are held to the rule a
 * client's name is (shared/unshowable.ts): a control or format character is refused with one
 * message on every database, and nothing is written. Before, U+0000 was stored on SQLite and
 * failed on PostgreSQL with the database's code, and a bidirectional override made
 * "Acme \u202Eprocca" read as another organization on both.
 */
import { testOnEachDatabase } from '../../helpers/db.js';
import { runAdmin } from '../../../scripts/admin.js';

function cli(url: string, argv: string[], stdin = '') {
  const err: string[] = [];
  return runAdmin(argv, { out: () => undefined, err: (l) => err.push(l), stdin: async () => stdin }, { DATABASE_URL: url }).then((code) => ({ code, err: err.join('\n') }));
}

const count = async (db: import('knex').Knex, table: string) => Number((await db(table).count({ n: '*' }).first())?.n);

const UNSHOWABLE_NAMES: Array<[string, string]> = [
  ['U+0000', 'Ac\u0000me'],
  ['a bidirectional override', 'Acme \u202Eprocca'],
  ['a zero-width space', 'Ac\u200Bme'],
  ['an escape', 'Acme\u001B[31m'],
];

testOnEachDatabase('tenant create refuses a name with a control or format character on every database, and writes nothing', async (t, { db, url }) => {
  for (const [label, name] of UNSHOWABLE_NAMES) {
    const refused = await cli(url, ['tenant', 'create', 'acme', '--name', name]);
    t.deepEqual([refused.code, refused.err], [1, 'error: tenant name must not contain control or format characters (such as zero-width or bidirectional marks)'], label);
  }
  t.is(await count(db, 'tenants'), 0);
  t.is(await count(db, 'audit_log'), 0);

  const accepted = await cli(url, ['tenant', 'create', 'acme', '--name', 'Société Générale 株式会社 🐾']);
  t.is(accepted.code, 0, accepted.err);
  t.is((await db('tenants').first('name')).name, 'Société Générale 株式会社 🐾');
});

testOnEachDatabase('user add refuses a display name with a control or format character on every database, and writes nothing', async (t, { db, url }) => {
  await cli(url, ['tenant', 'create', 'acme', '--name', 'Acme']);
  const audit = await count(db, 'audit_log');
  for (const [label, name] of UNSHOWABLE_NAMES) {
    const refused = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin', '--name', name], 'a long password');
    t.deepEqual([refused.code, refused.err], [1, 'error: display name must not contain control or format characters (such as zero-width or bidirectional marks)'], label);
  }
  t.is(await count(db, 'users'), 0);
  t.is(await count(db, 'memberships'), 0);
  t.is(await count(db, 'audit_log'), audit);

  const accepted = await cli(url, ['user', 'add', '--tenant', 'acme', '--email', 'ops@acme.example', '--role', 'admin', '--password-stdin', '--name', 'Zoë Ωmega-Ops'], 'a long password');
  t.is(accepted.code, 0, accepted.err);
  t.is((await db('users').first('display_name')).display_name, 'Zoë Ωmega-Ops');
});
