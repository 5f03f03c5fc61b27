/**
 * When the person who signed in has no organization to connect the product in (aegis is for
 * administrators only; an account in no active organization), the page says so, and it also lets
 * the person go back to the application, which learns `access_denied` (RFC 6749 §4.1.2.1) instead
 * of waiting for an answer that never comes. The person has interacted (signed in), so the error
 * goes back as a denial does (docs/auth.md).
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { follow, parseForm, postForm, registerClient, startAuthorization } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

const CALLBACK = 'http://127.0.0.1/callback';

for (const kind of databasesUnderTest()) {
  test(`with no organization to connect in, the page takes the person back to the application with access_denied [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    t.teardown(() => server.close());
    const { client_id: clientId } = await registerClient(server.url, { client_name: 'Posture Bot', redirect_uris: [CALLBACK] });
    // bob is a member (not an administrator) of globex only: there is nowhere he may connect aegis.
    const auth = await startAuthorization(server.url, { clientId, resource: server.aegis, scopes: ['aegis.scans.read'] });
    const signInPage = await follow(server.url, auth.jar, auth.response);
    const login = parseForm(signInPage.html!);
    const page = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', 'bob@globex.example'], ['password', PASSWORD]]));
    t.is(page.response.status, 403);
    t.regex(page.html!, /Only an administrator of an organization can connect Aegis/);
    t.regex(page.html!, /Return to 127\.0\.0\.1/, 'the page offers the way back to the application');

    const back = /<form method="post" action="([^"]+)">[\s\S]*?<\/form>/.exec(page.html!);
    t.truthy(back, 'a form leads back');
    const fields = [...(back?.[0] ?? '').matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m): [string, string] => [m[1], m[2]]);
    const answer = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, back?.[1] ?? '/', fields));
    const redirect = URL.parse(answer.url);
    t.is(redirect?.origin + (redirect?.pathname ?? ''), CALLBACK, `the application got no answer: ${answer.response.status} ${answer.url}`);
    t.is(redirect?.searchParams.get('error'), 'access_denied');
    t.is(redirect?.searchParams.get('state'), auth.state);
    t.is(redirect?.searchParams.get('iss'), server.url);
    t.is(await server.portico.context.db('connections').where({ client_id: clientId }).count({ n: '*' }).first().then((r) => Number(r?.n)), 0, 'nothing was connected');
  });
}
