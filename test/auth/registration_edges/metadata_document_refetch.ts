/**
 * A client ID metadata document is cached per instance (1 minute to 1 hour), so the sign-in and
 * consent pages may have to fetch it again: on another instance, after a restart, or once the
 * cache entry is past its age. When that fetch fails (the application's site is down or slow),
 * the person is told what failed and that trying again helps, and the request stays usable: it
 * is not Portico's failure, and it was answered 500 "Something went wrong on our side".
 */
import test from 'ava';
import { createTestDatabase, databasesUnderTest } from '../../helpers/db.js';
import { follow, metadataDocumentFetch, parseForm, postForm, startAuthorization } from '../../helpers/oauth.js';
import { freePort } from '../../helpers/server.js';
import { PASSWORD, startAuthServer } from '../support.js';

const CLIENT_ID = 'https://app.example.com/oauth/client.json';
const DOCUMENT = { client_name: 'Document App', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' };

for (const kind of databasesUnderTest()) {
  test(`a metadata document that cannot be fetched again during sign-in is said so (503, try again), and the sign-in goes on once it can [${kind}]`, async (t) => {
    const database = await createTestDatabase(kind);
    t.teardown(() => database.drop());
    // The same public URL before and after the restart, as in a real deployment.
    const port = await freePort();
    const env = { PORT: String(port), PUBLIC_AUTH_URL: `http://127.0.0.1:${port}` };
    const first = await startAuthServer(kind, { database, env, auth: { fetch: metadataDocumentFetch(CLIENT_ID, DOCUMENT) } });
    const auth = await startAuthorization(first.url, { clientId: CLIENT_ID, resource: first.forge, scopes: ['forge.chat.read'] });
    t.is((await follow(first.url, auth.jar, auth.response)).response.status, 200, 'the sign-in page');
    await first.stop();
    // Let this process's fetch see its kept-alive sockets to the stopped server close (lifecycle.test.ts).
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));

    // The restarted instance has no cached document, and the application's site is down.
    let siteUp = false;
    const serve = metadataDocumentFetch(CLIENT_ID, DOCUMENT);
    const site = (async (input: string | URL | Request, init?: RequestInit) => (siteUp ? serve(input, init) : new Response('unavailable', { status: 503 }))) as typeof fetch;
    const second = await startAuthServer(kind, { database, env, seed: false, auth: { fetch: site } });
    t.teardown(() => second.stop());

    const reloaded = await auth.jar.fetch(auth.pageUrl);
    const html = await reloaded.text();
    t.is(reloaded.status, 503, html.replace(/<style>[\s\S]*?<\/style>/, '').slice(0, 800));
    t.regex(html, /<code>unavailable<\/code>/);
    t.true(html.includes(CLIENT_ID), 'the page names the document that could not be read');
    t.regex(html, /[Tt]ry again/);
    t.notRegex(html, /on our side/);

    // The site is back: the same sign-in page, the same request, goes on to consent.
    siteUp = true;
    const page = await auth.jar.fetch(auth.pageUrl);
    t.is(page.status, 200);
    const form = parseForm(await page.text());
    const next = await follow(second.url, auth.jar, await postForm(second.url, auth.jar, form.action, [['csrf', form.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
    t.regex(next.html ?? '', /name="decision"/, 'the consent page');
    t.regex(next.html ?? '', /Document App/);
  });
}
