/**
 * password guessing at the authorization server's sign-in page is limited (10 attempts a
 * minute per address and e-mail, auth/interactions.ts), as the console's is. The console's limit
 * has tests; this one had none: removing it broke nothing. The e-mail counted is the one the
 * account is looked up by: a review found that padding it with whitespace past the field's old
 * 320-character cut, then one more character, made each padding a counter of its own while the
 * lookup still found the account.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { follow, parseForm, postForm, registerClient, startAuthorization } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../auth/support.js';

/** alice's e-mail, then whitespace past 320 characters (the old cut), then a character the cut dropped. */
const padded = (n: number) => `alice@acme.example${[...n.toString(2).padStart(302, '0')].map((bit) => (bit === '0' ? ' ' : '\t')).join('')}x`;

/** The sign-in form of a new authorization request: each call posts one attempt. */
async function signInForm(server: { url: string; forge: string }) {
  const { client_id: clientId } = await registerClient(server.url, { client_name: 'Guesser', redirect_uris: ['http://127.0.0.1/callback'] });
  const auth = await startAuthorization(server.url, { clientId, resource: server.forge, scopes: ['forge.chat.read'] });
  const form = parseForm((await follow(server.url, auth.jar, auth.response)).html!);
  return (email: string, password: string) => postForm(server.url, auth.jar, form.action, [['csrf', form.csrf], ['email', email], ['password', password]]);
}

for (const kind of databasesUnderTest()) {
  test(`the 11th sign-in attempt in a minute is refused with 429 and Retry-After, even with the right password; other e-mails are not [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const attempt = await signInForm(server);
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await attempt('alice@acme.example', `wrong guess ${i}`)).status);
      t.deepEqual(statuses, Array(10).fill(401));
      const right = await attempt('alice@acme.example', PASSWORD);
      t.is(right.status, 429, 'the right password over the limit is refused too');
      t.true(Number(right.headers.get('retry-after')) > 0);
      t.regex(await right.text(), /Too many sign-in attempts/);
      const other = await attempt('multi@example.com', PASSWORD);
      t.is(other.status, 303, 'another e-mail from the same address is not limited');
    } finally {
      await server.close();
    }
  });

  test(`another spelling of a limited e-mail (whitespace, case) is limited too; one longer than any account's is refused unread [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const attempt = await signInForm(server);
      for (let i = 0; i < 10; i++) t.is((await attempt('alice@acme.example', `wrong guess ${i}`)).status, 401);
      for (const email of ['  alice@acme.example', 'alice@acme.example\t\n', ' ALICE@Acme.Example ', `\talice@ACME.example${' '.repeat(230)}`]) {
        const right = await attempt(email, PASSWORD);
        t.is(right.status, 429, JSON.stringify(email));
        t.true(Number(right.headers.get('retry-after')) > 0);
      }
      for (const n of [1, 2, 3]) {
        const right = await attempt(padded(n), PASSWORD);
        t.is(right.status, 400, `padding ${n}: refused, not a sign-in`);
        t.is(right.headers.get('location'), null);
        t.regex(await right.text(), /An e-mail address has at most 254 characters\./);
      }
    } finally {
      await server.close();
    }
  });
}
