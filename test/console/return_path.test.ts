/**
 * A console session that ends under a person (it expired, they signed out in another tab, their
 * organization was suspended) sends them to the sign-in page, which says why and brings them back
 * to the page they were on; a form they sent then did nothing, and the page says so. The page to
 * come back to is only ever one of the console's own: a link cannot send a person elsewhere
 * through the sign-in.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { unescapeHtml } from '../helpers/oauth.js';
import { PASSWORD, Session, signIn, startConsole, type ConsoleFixture } from './setup.js';

/** Ends every console session of `user` as expiry does: the cookie stays, the server's session is over. */
async function expire(f: ConsoleFixture, user: string): Promise<void> {
  const { db } = f.server.portico.context;
  await db('console_sessions').where({ user_id: user }).update({ expires_at: Date.now() - 1 });
}

/** The page to come back to that a form carries, its HTML escapes undone. */
function hiddenNext(text: string): string | undefined {
  const value = /name="next" value="([^"]*)"/.exec(text)?.[1];
  return value === undefined ? undefined : unescapeHtml(value);
}

for (const kind of databasesUnderTest()) {
  test(`an ended session sends the person to sign in with the page they asked for, and signing in lands there [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = await signIn(f, 'admin@acme.example');
      t.is((await browser.request('/api/mcp/audit?product=forge')).status, 200);

      await expire(f, f.users.acmeAdmin);
      const asked = await browser.request('/api/mcp/audit?product=forge');
      t.is(asked.status, 302);
      t.is(asked.location, `/api/mcp/login?${new URLSearchParams({ next: '/api/mcp/audit?product=forge', ended: '1' })}`);

      const login = await browser.request(asked.location!);
      t.is(login.status, 200);
      t.regex(login.text, /<p class="notice" role="status">Your session has ended\. Sign in again to go on where you were\.<\/p>/);
      t.is(hiddenNext(login.text), '/api/mcp/audit?product=forge');

      // A wrong password keeps the page to come back to.
      const wrong = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'admin@acme.example', password: 'not-the-password', next: '/api/mcp/audit?product=forge' } });
      t.is(wrong.status, 401);
      t.is(hiddenNext(wrong.text), '/api/mcp/audit?product=forge');

      const signedIn = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(wrong.text), email: 'admin@acme.example', password: PASSWORD, next: '/api/mcp/audit?product=forge' } });
      t.is(signedIn.location, '/api/mcp/audit?product=forge');
      const back = await browser.request(signedIn.location!);
      t.is(back.status, 200);
      t.regex(back.text, /<input id="f-product" name="product" value="forge">/, 'the filter asked for is the one shown');
    } finally {
      await f.close();
    }
  });

  test(`a form sent after the session ended changes nothing, says so, and brings the person back to the form's page [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    const { db } = f.server.portico.context;
    try {
      const browser = await signIn(f, 'admin@acme.example');
      const confirmPath = `/api/mcp/connections/${f.forge.ann.connection.id}/revoke`;
      const confirm = await browser.request(confirmPath);
      t.is(confirm.status, 200);

      await expire(f, f.users.acmeAdmin);
      const sent = await browser.request(confirmPath, { form: { csrf: Session.csrfOf(confirm.text) }, headers: { referer: `${f.server.url}${confirmPath}` } });
      t.is(sent.status, 302);
      t.is(sent.location, `/api/mcp/login?${new URLSearchParams({ next: confirmPath, ended: 'unsent' })}`);
      t.is((await db('connections').where({ id: f.forge.ann.connection.id }).first()).revoked_at, null, 'nothing was revoked');

      const login = await browser.request(sent.location!);
      t.regex(login.text, /Your session ended before the form was sent, so nothing was changed\./);
      const signedIn = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'admin@acme.example', password: PASSWORD, next: hiddenNext(login.text)! } });
      t.is(signedIn.location, confirmPath, 'back at the confirmation, to send it again');

      // Another site's page as the form's origin is no page to come back to.
      await expire(f, f.users.acmeAdmin);
      const foreign = await browser.request(confirmPath, { form: { csrf: 'x' }, headers: { referer: 'https://elsewhere.example/api/mcp/audit' } });
      t.is(foreign.location, '/api/mcp/login?ended=unsent');
    } finally {
      await f.close();
    }
  });

  test(`the page to come back to goes through the organization choice of someone in several [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const browser = new Session(f.server.url);
      const asked = await browser.request('/api/mcp/audit?kind=tool');
      t.is(asked.location, `/api/mcp/login?${new URLSearchParams({ next: '/api/mcp/audit?kind=tool' })}`, 'never signed in: no session ended');
      const login = await browser.request(asked.location!);
      t.notRegex(login.text, /class="notice"/);
      const signedIn = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'multi@example.com', password: PASSWORD, next: hiddenNext(login.text)! } });
      t.is(signedIn.location, `/api/mcp/organization?${new URLSearchParams({ next: '/api/mcp/audit?kind=tool' })}`);
      const choose = await browser.request(signedIn.location!);
      t.is(hiddenNext(choose.text), '/api/mcp/audit?kind=tool');
      const chosen = await browser.request('/api/mcp/organization', { form: { csrf: Session.csrfOf(choose.text), tenant: 'globex', next: hiddenNext(choose.text)! } });
      t.is(chosen.location, '/api/mcp/audit?kind=tool');
      t.regex((await browser.request(chosen.location!)).text, /Globex Industries/);
    } finally {
      await f.close();
    }
  });

  test(`a page to come back to that is not one of the console's pages is left out, never followed [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const hostile = [
        'https://elsewhere.example/api/mcp/audit', '//elsewhere.example/api/mcp/audit', '/\\elsewhere.example/api/mcp/audit',
        'javascript:alert(1)', '/api/mcp/v1/connections', '/api/mcp/logout', '/api/mcp/login?next=/api/mcp/audit', '/elsewhere',
        '/api/mcp/connections', `/api/mcp/audit?x=${'a'.repeat(2000)}`,
      ];
      for (const next of hostile) {
        const browser = new Session(f.server.url);
        const login = await browser.request(`/api/mcp/login?${new URLSearchParams({ next, ended: 'whatever' })}`);
        t.is(login.status, 200, next);
        t.is(hiddenNext(login.text), undefined, next);
        t.notRegex(login.text, /class="notice"/, 'a reason the page does not know says nothing');
        const signedIn = await browser.request('/api/mcp/login', { form: { csrf: Session.csrfOf(login.text), email: 'admin@acme.example', password: PASSWORD, next } });
        t.is(signedIn.location, '/api/mcp/connections', next);
      }
    } finally {
      await f.close();
    }
  });
}
