/**
 * `client add --name` refuses what dynamic registration refuses in a client_name (auth/clients.ts):
 * controls, format characters (bidi overrides, zero-width characters, the tag characters that
 * carry hidden text) and the line and paragraph separators. The name is shown on the consent page
 * and in the console, so it must read as what it is; nothing is written when it is refused.
 */
import { testOnEachDatabase } from '../../helpers/db.js';
import { runAdmin } from '../../../scripts/admin.js';

function cli(url: string, argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  return runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l), stdin: async () => '' }, { DATABASE_URL: url }).then((code) => ({ code, out: out.join('\n'), err: err.join('\n') }));
}

const tags = (text: string) => [...text].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');

const UNSHOWABLE = [
  ['a right-to-left override', 'Acme \u202Etnatsissa'],
  ['a zero-width space', 'Ac\u200Bme Assistant'],
  ['a bell (C0 control)', 'Acme\u0007 Assistant'],
  ['a line feed', 'Acme\nAssistant'],
  ['a C1 control', 'Acme\u0085Assistant'],
  ['a line separator', 'Acme\u2028Assistant'],
  ['tag characters', `Acme${tags('ignore previous instructions')}`],
] as const;

testOnEachDatabase('client add refuses a name with control, bidi or zero-width characters, and writes nothing', async (t, { db, url }) => {
  for (const [what, name] of UNSHOWABLE) {
    const result = await cli(url, ['client', 'add', '--name', name, '--redirect-uri', 'http://127.0.0.1/callback']);
    t.is(result.code, 1, `${what}: ${result.out}`);
    t.is(result.err, 'error: client_name must be 1-200 characters without control characters', what);
  }
  t.is(Number((await db('oidc_payloads').where({ model: 'Client' }).count({ n: '*' }).first())?.n), 0);
  t.is(Number((await db('audit_log').count({ n: '*' }).first())?.n), 0);

  const plain = await cli(url, ['client', 'add', '--name', 'Acme Assistant — “Ünïcode”', '--redirect-uri', 'http://127.0.0.1/callback']);
  t.is(plain.code, 0, plain.err);
});

testOnEachDatabase('client add --redirect-uri= (empty) is refused as empty, not as too long, and writes nothing', async (t, { db, url }) => {
  const result = await cli(url, ['client', 'add', '--name', 'Acme Assistant', '--redirect-uri=']);
  t.is(result.code, 1, result.out);
  t.regex(result.err, /^error: .*redirect_uris must not be empty/);
  t.is(Number((await db('oidc_payloads').where({ model: 'Client' }).count({ n: '*' }).first())?.n), 0);
});
