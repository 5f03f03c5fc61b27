/**
 * An authorization request that names a resource and, of scopes, only ones that name no resource
 * (`openid`, `offline_access`, `email`) asks for what the resource offers, as one with no scope
 * does (docs/auth.md). A client that adds `offline_access` whenever the authorization server
 * advertises it (Claude Code was reported doing so, anthropics/claude-code#41610) asks for it
 * alone where a roadmap product's 401 challenge and resource metadata name no scope (with
 * `prompt=consent`, as the MCP SDKs send with it), and that was refused `invalid_scope`: the
 * product could not be connected before it shipped.
 */
import test from 'ava';
import { authenticateBearer } from '../../../db/grant_store.js';
import { databasesUnderTest } from '../../helpers/db.js';
import { consent, exchangeCode, follow, parseForm, postForm, registerClient, startAuthorization } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer, type AuthServer } from '../support.js';

/** The flow to the consent page for `scopes` at `resource`; returns the page's scopes and the code once allowed. */
async function connect(server: AuthServer, resource: string, scopes: string[], extra: Record<string, string> = {}) {
  const { client_id: clientId } = await registerClient(server.url);
  const auth = await startAuthorization(server.url, { clientId, resource, scopes, extra });
  let page = await follow(server.url, auth.jar, auth.response);
  if (!/name="password"/.test(page.html ?? '')) throw new Error(`no sign-in page: ${page.response.status} ${(page.html ?? '').replace(/<style>[\s\S]*<\/style>/, '').slice(0, 800)}`);
  const signIn = parseForm(page.html!);
  page = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, signIn.action, [['csrf', signIn.csrf], ['email', 'alice@acme.example'], ['password', PASSWORD]]));
  const offered = parseForm(page.html ?? '').scopes;
  const done = await consent(server.url, auth.jar, page.html!, { tenant: 'acme' });
  const code = new URL(done.url).searchParams.get('code');
  if (!code) throw new Error(`no code: ${done.url}`);
  return { offered, tokens: await exchangeCode(server.url, { code, clientId, redirectUri: auth.redirectUri, verifier: auth.verifier, resource }) };
}

for (const kind of databasesUnderTest()) {
  test(`a resource asked for with only scopes that name no resource is offered whole, as with no scope [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    t.teardown(() => server.close());
    const midas = `${server.url}/mcp/midas`;

    // A roadmap product: its challenge and metadata name no scope, so the client asks offline_access alone.
    const roadmap = await connect(server, midas, ['offline_access'], { prompt: 'consent' });
    t.deepEqual(roadmap.offered, ['midas.ledger.read']);
    t.truthy(roadmap.tokens.refreshToken);
    const principal = await authenticateBearer(server.portico.context.db, roadmap.tokens.accessToken, midas);
    t.is(principal.product, 'midas');
    t.deepEqual([...principal.scopes], ['midas.ledger.read']);

    // openid alone names no resource either; the ID token comes with the resource's scopes.
    const live = await connect(server, server.forge, ['openid']);
    t.deepEqual(live.offered, ['forge.chat.read', 'forge.chat.write']);
    t.deepEqual([...(await authenticateBearer(server.portico.context.db, live.tokens.accessToken, server.forge)).scopes].sort(), ['forge.chat.read', 'forge.chat.write']);
  });
}
