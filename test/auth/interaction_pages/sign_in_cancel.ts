/**
 * The sign-in page's Cancel: a person who does not want to connect tells the application so
 * (`access_denied`, RFC 6749 §4.1.2.1) instead of leaving it waiting, through a form with the
 * same defences as the sign-in and consent forms (checklist G3). Nobody has signed in, so nothing
 * is written: no grant, no connection, no audit record.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { CookieJar, follow, postForm, registerClient, startAuthorization, unescapeHtml } from '../../helpers/oauth.js';
import { PASSWORD, rowCounts, startAuthServer, type AuthServer } from '../support.js';

const CALLBACK = 'http://127.0.0.1/callback';

/** The form the page's Cancel button submits (the button names it with its `form` attribute). */
function cancelForm(html: string): { action: string; csrf: string } {
  const id = /<button type="submit" form="([^"]+)"[^>]*>Cancel<\/button>/.exec(html)?.[1];
  const form = id ? new RegExp(`<form id="${id}" method="post" action="([^"]+)">[\\s\\S]*?<\\/form>`).exec(html) : null;
  const csrf = form ? /name="csrf" value="([^"]+)"/.exec(form[0])?.[1] : undefined;
  if (!form || !csrf) throw new Error(`no Cancel form on the page: ${html.slice(0, 2000)}`);
  return { action: unescapeHtml(form[1]), csrf: unescapeHtml(csrf) };
}

async function toSignIn(server: AuthServer) {
  const { client_id: clientId } = await registerClient(server.url, { client_name: 'Undecided Assistant', redirect_uris: [CALLBACK] });
  const auth = await startAuthorization(server.url, { clientId, redirectUri: CALLBACK, resource: server.forge, scopes: ['forge.chat.read'] });
  const page = await follow(server.url, auth.jar, auth.response);
  return { auth, page, form: cancelForm(page.html!) };
}

for (const kind of databasesUnderTest()) {
  test(`Cancel on the sign-in page sends the application access_denied, ends the request and writes nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    t.teardown(() => server.close());
    const { auth, page, form } = await toSignIn(server);
    t.is(page.response.status, 200);
    const before = await rowCounts(server);

    const cancelled = await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf]]);
    t.is(cancelled.status, 303, 'never 307 after a form POST (checklist A7)');
    const answer = await follow(server.url, auth.jar, cancelled);
    const redirect = new URL(answer.url);
    t.is(redirect.origin + redirect.pathname, CALLBACK, `the application got no answer: ${answer.response.status} ${answer.url}`);
    t.is(redirect.searchParams.get('error'), 'access_denied');
    t.is(redirect.searchParams.get('state'), auth.state);
    t.is(redirect.searchParams.get('iss'), server.url);
    t.deepEqual(await rowCounts(server), before, 'no grant, connection, token or audit record');

    // The request is over: neither a second Cancel nor the sign-in page can continue it.
    t.is((await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf]])).status, 404);
    t.is((await auth.jar.fetch(auth.pageUrl)).status, 404);
  });

  test(`the sign-in page's Cancel is refused with a bad CSRF token, from another site or a foreign Origin, and the sign-in goes on [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    t.teardown(() => server.close());
    const { auth, form } = await toSignIn(server);
    const other = await toSignIn(server);
    const before = await rowCounts(server);
    const attempts: Array<[string, Response, number]> = [
      ['a wrong token', await postForm(server.url, auth.jar, form.action, [['csrf', 'x'.repeat(43)]]), 403],
      ['no token', await postForm(server.url, auth.jar, form.action, []), 403],
      ["another interaction's token", await postForm(server.url, auth.jar, form.action, [['csrf', other.form.csrf]]), 403],
      ['Sec-Fetch-Site cross-site', await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf]], { 'sec-fetch-site': 'cross-site' }), 403],
      ['a foreign Origin', await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf]], { origin: 'https://evil.example', 'sec-fetch-site': '' }), 403],
      ['no interaction cookie', await postForm(server.url, new CookieJar(), form.action, [['csrf', form.csrf]]), 404],
      ['GET on the Cancel action', await auth.jar.fetch(new URL(form.action, server.url).href), 405],
    ];
    for (const [label, response, status] of attempts) {
      t.is(response.status, status, label);
      t.is(response.headers.get('location'), null, `${label}: no redirect to the application`);
      t.is(response.headers.get('cache-control'), 'no-store', label);
      t.regex(await response.text(), /Error code <code>[a-z_]+<\/code>/, label);
    }
    t.deepEqual(await rowCounts(server), before, 'nothing written');

    // The refused forms ended nothing: the person can still sign in.
    const signInPage = await follow(server.url, auth.jar, await auth.jar.fetch(auth.pageUrl));
    const login = /<form method="post" action="([^"]+)">[\s\S]*?name="csrf" value="([^"]+)"/.exec(signInPage.html!)!;
    const signedIn = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, unescapeHtml(login[1]), [['csrf', unescapeHtml(login[2])], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
    t.regex(signedIn.html ?? '', /name="decision" value="allow"/, 'the consent page follows');
  });
}
