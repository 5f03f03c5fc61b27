/**
 * A client ID metadata document names its client too, and that name is shown on the sign-in and
 * consent pages and in the console like a self-registered client's. The rule registration applies
 * (checklist G6; docs/auth.md "registration abuse": blank, longer than 200 characters, or holding
 * control or format characters: refused) holds for it as well: such a document is refused as
 * `invalid_client_metadata`, on a page, and its name is shown nowhere.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { follow, startAuthorization } from '../../helpers/oauth.js';
import { startAuthServer } from '../support.js';

/** Names that read as something else, or cannot be read at all; one document (and client id) each. */
const NAMES = ['Claude \u202Eedoc\u202C', 'Cl\u200Baude', 'Evil\u0085Name', 'n'.repeat(1000), '   '];
const documentUrl = (i: number) => `https://client.example/oauth/${i}/metadata.json`;

for (const kind of databasesUnderTest()) {
  test(`a metadata document whose client_name hides what it reads as is refused, and the name is not shown [${kind}]`, async (t) => {
    const fetchDocument = async (input: string | URL | Request) => {
      const url = String(input instanceof Request ? input.url : input);
      const i = NAMES.findIndex((_, n) => documentUrl(n) === url);
      if (i < 0) return new Response('not found', { status: 404 });
      return Response.json({ client_id: url, client_name: NAMES[i], redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] });
    };
    const server = await startAuthServer(kind, { auth: { fetch: fetchDocument as typeof fetch } });
    t.teardown(() => server.close());

    for (const [i, name] of NAMES.entries()) {
      const auth = await startAuthorization(server.url, { clientId: documentUrl(i), redirectUri: 'http://127.0.0.1:4000/callback', resource: server.forge, scopes: ['forge.chat.read'] });
      const page = await follow(server.url, auth.jar, auth.response);
      const html = page.html ?? '';
      const text = html.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(0, 300);
      if (name.trim()) t.false(html.includes(name), `${JSON.stringify(name.slice(0, 30))} is shown: ${text}`);
      t.regex(html, /invalid_client_metadata/, `${JSON.stringify(name.slice(0, 30))} was not refused: ${text}`);
      t.notRegex(html, /name="password"/, `${JSON.stringify(name.slice(0, 30))}: the sign-in form is offered`);
    }
  });
}
