/**
 * Consent every time for self-registered clients (checklist G1, docs/auth.md), including a web client
 * (an https redirect URI). consent.test.ts checks this with a loopback client, which oidc-provider
 * prompts anyway because loopback makes it native (notes §1.6): with loadExistingGrant handing a
 * self-registered client the session's live grant, that test still passed, and a web client was
 * sent a new code without asking. The same holds for a client ID metadata document client: its
 * document is on whatever site its client_id names (the remembered-consent attack of FastMCP's
 * GHSA-6x8h-498w-gv8c, made worse by metadata documents), and the other tests' documents name
 * loopback redirect URIs, which would be prompted anyway.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, CookieJar, follow, metadataDocumentFetch, registerClient, startAuthorization } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

const scopes = ['forge.chat.read'];

for (const kind of databasesUnderTest()) {
  test(`a self-registered web client is asked for consent again in a signed-in session [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const redirectUri = 'https://client.example/cb';
      const client = await registerClient(server.url, { redirect_uris: [redirectUri] });
      t.is(client.application_type, 'web');
      const jar = new CookieJar();
      const first = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientId: client.client_id, redirectUri, jar });
      t.truthy(first.code);
      const again = await startAuthorization(server.url, { clientId: client.client_id, redirectUri, resource: server.forge, scopes, jar });
      const page = await follow(server.url, jar, again.response);
      t.is(URL.parse(page.url)?.searchParams.get('code') ?? null, null, 'no code without the person’s consent');
      t.regex(page.html ?? '', /name="decision"/, 'the consent page comes back');
      t.notRegex(page.html ?? '', /name="password"/, 'signed in already');
    } finally {
      await server.close();
    }
  });

  test(`a metadata-document web client is asked for consent again in a signed-in session [${kind}]`, async (t) => {
    const clientId = 'https://client.example/oauth/metadata.json';
    const redirectUri = 'https://client.example/cb';
    const server = await startAuthServer(kind, { auth: { fetch: metadataDocumentFetch(clientId, { client_name: 'Metadata Web App', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }) } });
    try {
      const jar = new CookieJar();
      const first = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientId, redirectUri, jar });
      t.truthy(first.code);
      const again = await startAuthorization(server.url, { clientId, redirectUri, resource: server.forge, scopes, jar });
      const page = await follow(server.url, jar, again.response);
      t.is(URL.parse(page.url)?.searchParams.get('code') ?? null, null, 'no code without the person’s consent');
      t.regex(page.html ?? '', /name="decision"/, 'the consent page comes back');
      t.regex(page.html ?? '', /identified by its web address/);
      t.notRegex(page.html ?? '', /name="password"/, 'signed in already');
    } finally {
      await server.close();
    }
  });
}
