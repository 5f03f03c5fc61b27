/**
 * When the database refuses what an operator command does (a user without write permission, a
 * read-only database), the command prints one line in Portico's words (docs/errors.md, STYLE.md
 * rule 4): never the SQL statement knex puts in front of the driver's message, never a bare
 * "internal error", and not knex's own advice to run `knex migrate:unlock`.
 */
import test from 'ava';
import { runAdmin } from '../../../scripts/admin.js';
import { testOnEachDatabase, createMigratedDatabase, type MigratedDatabase } from '../../helpers/db.js';
import { runScript } from '../../helpers/script.js';

function cli(url: string, argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  return runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l), stdin: async () => '' }, { DATABASE_URL: url }).then((code) => ({ code, out, err }));
}

/** Writes to `table` are refused as a database without the permission refuses them. */
async function refuseWrites(database: MigratedDatabase, table: string): Promise<void> {
  const { db } = database;
  if (database.kind === 'postgres') {
    await db.raw(`create or replace function refuse_write() returns trigger language plpgsql as $$ begin raise exception 'permission denied for table %', tg_table_name using errcode = '42501'; end $$`);
    await db.raw(`create trigger refuse_write_${table} before insert or update on ${table} for each row execute function refuse_write()`);
  } else {
    await db.raw(`create trigger refuse_insert_${table} before insert on ${table} begin select raise(abort, 'permission denied'); end`);
    await db.raw(`create trigger refuse_update_${table} before update on ${table} begin select raise(abort, 'permission denied'); end`);
  }
}

const SQL = /\b(insert into|update|select|delete from)\b|\$\d|`|"surfaces"|"tenants"/i;

testOnEachDatabase('a command the database refuses prints one line without SQL, and writes nothing', async (t, database) => {
  await refuseWrites(database, 'surfaces');
  await refuseWrites(database, 'tenants');

  for (const argv of [['surface', 'ship', 'midas'], ['tenant', 'create', 'initech', '--name', 'Initech']]) {
    const result = await cli(database.url, argv);
    t.is(result.code, 1, argv.join(' '));
    t.deepEqual(result.out, [], argv.join(' '));
    t.is(result.err.length, 1, result.err.join('\n'));
    t.regex(result.err[0], /^error: /);
    t.notRegex(result.err[0], SQL, result.err[0]);
    t.not(result.err[0], 'error: internal error', `${argv.join(' ')}: says what went wrong`);
    if (database.kind === 'postgres') t.regex(result.err[0], /not allowed/, result.err[0]);
  }
  t.is(Number((await database.db('surfaces').count({ n: '*' }).first())?.n), 0);
  t.is(Number((await database.db('tenants').count({ n: '*' }).first())?.n), 0);
});

const postgres = process.env.TEST_DATABASE_URL ? test : test.skip;

postgres('a read-only PostgreSQL gets one clear line from the admin CLI and npm run migrate, without SQL or knex\'s advice (real processes) [postgres]', async (t) => {
  const database = await createMigratedDatabase('postgres');
  t.teardown(() => database.drop());
  const url = new URL(database.url);
  url.searchParams.set('options', [url.searchParams.get('options'), '-c default_transaction_read_only=on'].filter(Boolean).join(' '));

  for (const [script, args] of [['scripts/admin.ts', ['tenant', 'create', 'initech', '--name', 'Initech']], ['scripts/migrate.ts', []]] as const) {
    const { code, stderr: lines } = await runScript(script, args, { DATABASE_URL: url.href });
    const stderr = lines.join('\n');
    t.is(code, 1, `${script}: ${stderr}`);
    t.is(lines.length, 1, `${script}: ${stderr}`);
    t.regex(lines[0], /^error: .*read-only/, lines[0]);
    t.notRegex(stderr, SQL, stderr);
    t.notRegex(stderr, /migrate:unlock/, stderr);
  }
  t.is(Number((await database.db('tenants').count({ n: '*' }).first())?.n), 0);
});
