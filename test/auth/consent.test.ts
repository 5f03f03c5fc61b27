/**
 * Sign-in and consent pages (checklist G1-G4, A7): what the person sees, what they may choose,
 * and the defences of the forms. A refused submission writes nothing.
 */
import test from 'ava';
import { addMembership } from '../../db/accounts.js';
import { authenticateBearer, findConnectionByGrant } from '../../db/grant_store.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeCode, authorizeWithPassword, consent, CookieJar, exchangeCode, follow, parseForm, postForm, registerClient, startAuthorization, type Authorization } from '../helpers/oauth.js';
import { addRegisteredClient, PASSWORD, rowCounts, startAuthServer, type AuthServer } from './support.js';

const scopes = ['forge.chat.read', 'forge.chat.write'];

/** Starts an authorization and signs in; returns the consent page. */
async function toConsent(server: AuthServer, email: string, options: { clientId?: string; redirectUri?: string; jar?: CookieJar; resource?: string; scopes?: string[] } = {}) {
  const clientId = options.clientId ?? (await registerClient(server.url, { client_name: 'Claude <Desktop>', redirect_uris: [options.redirectUri ?? 'http://127.0.0.1/callback'] })).client_id;
  const auth = await startAuthorization(server.url, { clientId, redirectUri: options.redirectUri, resource: options.resource ?? server.forge, scopes: options.scopes ?? scopes, jar: options.jar });
  let page = await follow(server.url, auth.jar, auth.response);
  if (/name="password"/.test(page.html ?? '')) {
    const login = parseForm(page.html!);
    page = await follow(server.url, auth.jar, await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', email], ['password', PASSWORD]]));
  }
  return { auth, page, clientId };
}

function assertPageHeaders(t: import('ava').ExecutionContext, response: Response, label: string) {
  const csp = response.headers.get('content-security-policy') ?? '';
  t.regex(csp, /frame-ancestors 'none'/, label);
  t.notRegex(csp, /form-action/, `${label}: form-action would break the redirect to the client`);
  t.is(response.headers.get('x-frame-options'), 'DENY', label);
  t.is(response.headers.get('cache-control'), 'no-store', label);
  t.is(response.headers.get('referrer-policy'), 'no-referrer', label);
}

for (const kind of databasesUnderTest()) {
  test(`the sign-in and consent pages show who asks for what, with accessible labels and protective headers [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'Claude <Desktop>', redirect_uris: ['https://app.example/cb'] });
      const auth = await startAuthorization(server.url, { clientId, redirectUri: 'https://app.example/cb', resource: server.forge, scopes });
      const signIn = await follow(server.url, auth.jar, auth.response);
      assertPageHeaders(t, signIn.response, 'sign-in');
      for (const label of ['<label for="email">Email</label>', '<label for="password">Password</label>', '>Sign in</button>']) t.true(signIn.html!.includes(label), label);
      t.true(signIn.html!.includes('Claude &#60;Desktop&#62;'), 'the client name is escaped');
      t.false(signIn.html!.includes('<Desktop>'));

      const wrong = await postForm(server.url, auth.jar, parseForm(signIn.html!).action, [['csrf', parseForm(signIn.html!).csrf], ['email', 'multi@example.com'], ['password', 'not the password']]);
      t.is(wrong.status, 401);
      t.regex(await wrong.text(), /do not match an account/);

      const login = parseForm(signIn.html!);
      const posted = await postForm(server.url, auth.jar, login.action, [['csrf', login.csrf], ['email', 'multi@example.com'], ['password', PASSWORD]]);
      t.is(posted.status, 303, 'never 307 after a credential POST');
      const page = await follow(server.url, auth.jar, posted);
      assertPageHeaders(t, page.response, 'consent');
      const html = page.html!;
      for (const label of ['<label for="tenant">Organization</label>', '>Allow</button>', '>Deny</button>']) t.true(html.includes(label), label);
      t.regex(html, /registered itself — not verified/);
      t.regex(html, /Returns you to<\/dt><dd><strong>app\.example<\/strong><\/dd>/, 'an https redirect URI carries no loopback warning');
      t.true(html.includes(clientId));
      t.regex(html, /Read your conversations<code>forge\.chat\.read<\/code>/);
      t.regex(html, /Write messages in your conversations<code>forge\.chat\.write<\/code>/);
      const form = parseForm(html);
      t.deepEqual(form.organizations.map((o) => o.slug), ['acme', 'globex'], 'exactly the person\'s organizations');
      t.deepEqual(form.scopes, scopes);
    } finally {
      await server.close();
    }
  });

  test(`a loopback redirect URI is shown with its port and marked as an app on this computer [${kind}]`, async (t) => {
    // MCP authorization, "Localhost Redirect URI Risks": any local program can listen on a loopback
    // port, so the page says where the code goes and that it is not a web site (checklist G2).
    const server = await startAuthServer(kind);
    try {
      for (const host of ['127.0.0.1', '[::1]', 'localhost']) {
        const { client_id: clientId } = await registerClient(server.url, { client_name: 'Local App', redirect_uris: [`http://${host}/callback`] });
        const { page } = await toConsent(server, 'alice@acme.example', { clientId, redirectUri: `http://${host}:54321/callback` });
        t.regex(page.html ?? '', /name="decision"/, host);
        const returnsTo = /Returns you to<\/dt><dd>(.*?)<\/dd>/.exec(page.html ?? '')?.[1] ?? '';
        t.is(returnsTo, `<strong>${host}:54321</strong> <span class="badge warn">an app on this computer</span>`, host);
      }
    } finally {
      await server.close();
    }
  });

  test(`consent for an organization the person is not a member of is impossible, and writes nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { auth, page } = await toConsent(server, 'alice@acme.example');
      t.deepEqual(parseForm(page.html!).organizations.map((o) => o.slug), ['acme'], 'globex is not offered');
      const before = await rowCounts(server);
      const refused = await consent(server.url, auth.jar, page.html!, { tenant: 'globex', tenantId: server.tenants.globex.id });
      t.is(refused.response.status, 403);
      t.regex(refused.html!, /not a member of that organization/);
      const bogus = await consent(server.url, auth.jar, page.html!, { tenant: 'x', tenantId: '00000000-0000-0000-0000-000000000000' });
      t.is(bogus.response.status, 403);
      // No organization at all is a malformed form, not a refusal.
      const form = parseForm(page.html!);
      const none = await postForm(server.url, auth.jar, form.action, [['csrf', form.csrf], ...form.scopes.map((s): [string, string] => ['scope', s]), ['decision', 'allow']]);
      t.is(none.status, 400);
      t.regex(await none.text(), /Choose an organization[\s\S]*invalid_request/);
      t.deepEqual(await rowCounts(server), before);

      // The same page then still works for the person's own organization.
      const allowed = await consent(server.url, auth.jar, page.html!, { tenant: 'acme' });
      t.truthy(new URL(allowed.url).searchParams.get('code'));
    } finally {
      await server.close();
    }
  });

  test(`a product of the whole organization's set-up (aegis) is connected by its administrators only [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { client_id: clientId } = await registerClient(server.url, { redirect_uris: ['http://127.0.0.1/callback'] });
      const aegis = { resource: server.aegis, scopes: ['aegis.scans.read', 'aegis.findings.read'], clientId };
      const before = await rowCounts(server);
      // bob is a member of globex only: there is no organization he may connect aegis in.
      const member = await toConsent(server, 'bob@globex.example', aegis);
      t.is(member.page.response.status, 403);
      t.regex(member.page.html!, /Only an administrator of an organization can connect Aegis/);
      t.regex(member.page.html!, /forbidden/);
      t.deepEqual(await rowCounts(server), before);

      // alice administers acme and is a member of globex: only acme is offered, and globex is refused if posted.
      await addMembership(server.portico.context.db, { userId: server.users.alice.id, tenantId: server.tenants.globex.id, role: 'member' });
      const { auth, page } = await toConsent(server, 'alice@acme.example', aegis);
      t.deepEqual(parseForm(page.html!).organizations.map((o) => o.slug), ['acme']);
      const refused = await consent(server.url, auth.jar, page.html!, { tenant: 'globex', tenantId: server.tenants.globex.id });
      t.is(refused.response.status, 403);
      t.regex(refused.html!, /only administrators can connect Aegis/);
      const allowed = await consent(server.url, auth.jar, page.html!, { tenant: 'acme' });
      t.truthy(new URL(allowed.url).searchParams.get('code'));

      // Other products stay open to members.
      const forge = await toConsent(server, 'bob@globex.example');
      t.deepEqual(parseForm(forge.page.html!).organizations.map((o) => o.slug), ['globex']);
    } finally {
      await server.close();
    }
  });

  test(`the person chooses the organization and may untick scopes; the grant records exactly that [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const code = await authorizeCode(server.url, { email: 'multi@example.com', password: PASSWORD, tenant: 'globex', resource: server.forge, scopes, allow: ['forge.chat.read'] });
      const tokens = await exchangeCode(server.url, { ...code, resource: server.forge });
      t.is(tokens.scope, 'forge.chat.read');
      const principal = await authenticateBearer(server.portico.context.db, tokens.accessToken, server.forge);
      t.is(principal.tenant.slug, 'globex');
      t.deepEqual([...principal.scopes], ['forge.chat.read']);
      const connection = await findConnectionByGrant(server.portico.context.db, principal.grantId);
      t.like(connection, { tenant_id: server.tenants.globex.id, user_id: server.users.multi.id, scopes: 'forge.chat.read' });
      const audit = await server.portico.context.db('audit_log').where({ name: 'consent.grant' }).first();
      t.is(audit.tenant_id, server.tenants.globex.id);
      t.like(JSON.parse(audit.args_redacted), { scopes: ['forge.chat.read'], refused: ['forge.chat.write'] });

      const { auth, page } = await toConsent(server, 'multi@example.com');
      const none = await consent(server.url, auth.jar, page.html!, { tenant: 'acme', allow: [] });
      t.is(none.response.status, 400);
      t.regex(none.html!, /Choose at least one permission/);
    } finally {
      await server.close();
    }
  });

  test(`for a person in several organizations, the organization this application is connected in is selected (a step-up), else the first [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const selectedSlug = (html: string) => /<option value="[^"]+" data-slug="([^"]+)" selected>/.exec(html)?.[1];
      const redirectUri = 'http://127.0.0.1/callback';
      const { clientId } = await authorizeCode(server.url, { email: 'multi@example.com', password: PASSWORD, tenant: 'globex', redirectUri, resource: server.forge, scopes, allow: ['forge.chat.read'] });
      // The same application asks for more (a step-up): globex, where it is connected, not acme, the first.
      const stepUp = await toConsent(server, 'multi@example.com', { clientId, redirectUri, scopes: ['forge.chat.write'] });
      t.is(selectedSlug(stepUp.page.html!), 'globex');
      // Another product of the same application, or another application: the first organization.
      t.is(selectedSlug((await toConsent(server, 'multi@example.com', { clientId, redirectUri, resource: `${server.url}/mcp/midas`, scopes: ['midas.ledger.read'] })).page.html!), 'acme');
      t.is(selectedSlug((await toConsent(server, 'multi@example.com')).page.html!), 'acme');
      // Once that connection is revoked, it is no longer where the application is connected.
      await server.portico.context.db('connections').where({ client_id: clientId }).update({ revoked_at: Date.now() });
      t.is(selectedSlug((await toConsent(server, 'multi@example.com', { clientId, redirectUri, scopes: ['forge.chat.write'] })).page.html!), 'acme');
    } finally {
      await server.close();
    }
  });

  test(`Back from the consent page to the finished sign-in page says where to go, and the consent page still answers [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { auth, page } = await toConsent(server, 'alice@acme.example');
      const back = await follow(server.url, auth.jar, await auth.jar.fetch(auth.pageUrl));
      t.is(back.response.status, 404);
      t.regex(back.html!, /This sign-in step is finished or has expired\. If you came back here from a later step, go forward again/);
      const allowed = await consent(server.url, auth.jar, page.html!, { tenant: 'acme' });
      t.truthy(new URL(allowed.url).searchParams.get('code'), 'the consent page, gone forward to, still works');
    } finally {
      await server.close();
    }
  });

  test(`Deny sends the client access_denied and is audited [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { auth, page } = await toConsent(server, 'alice@acme.example');
      const before = await rowCounts(server);
      const denied = await consent(server.url, auth.jar, page.html!, { tenant: 'acme', decision: 'deny' });
      const redirect = new URL(denied.url);
      t.is(redirect.searchParams.get('error'), 'access_denied');
      t.is(redirect.searchParams.get('state'), auth.state);
      t.is(redirect.searchParams.get('iss'), server.url);
      const after = await rowCounts(server);
      t.deepEqual({ ...after, audit: before.audit }, before, 'no grant, connection or token');
      const audit = await server.portico.context.db('audit_log').where({ name: 'consent.deny' }).first();
      t.like(audit, { tenant_id: server.tenants.acme.id, user_id: server.users.alice.id, outcome: 'denied', product: 'forge' });
    } finally {
      await server.close();
    }
  });

  test(`forms with a bad CSRF token, from another site, replayed, or for an unknown interaction are refused [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { auth, page } = await toConsent(server, 'alice@acme.example');
      const form = parseForm(page.html!);
      const acme = form.organizations[0].id;
      const fields = (csrf: string): Array<[string, string]> => [['csrf', csrf], ['tenant', acme], ['scope', 'forge.chat.read'], ['decision', 'allow']];
      const before = await rowCounts(server);

      const attempts: Array<[string, Response, number]> = [
        ['a wrong token', await postForm(server.url, auth.jar, form.action, fields('x'.repeat(43))), 403],
        ['no token', await postForm(server.url, auth.jar, form.action, fields('')), 403],
        ['Sec-Fetch-Site cross-site', await postForm(server.url, auth.jar, form.action, fields(form.csrf), { 'sec-fetch-site': 'cross-site' }), 403],
        ['a foreign Origin', await postForm(server.url, auth.jar, form.action, fields(form.csrf), { origin: 'https://evil.example', 'sec-fetch-site': '' }), 403],
        ['no interaction cookie', await postForm(server.url, new CookieJar(), form.action, fields(form.csrf)), 404],
        ['an unknown interaction', await postForm(server.url, auth.jar, '/oauth/interaction/unknown-uid/consent', fields(form.csrf)), 404],
        ['a JSON body', await auth.jar.fetch(new URL(form.action, server.url).href, { method: 'POST', headers: { 'content-type': 'application/json', origin: new URL(server.url).origin }, body: '{}' }), 415],
        ['a huge body', await postForm(server.url, auth.jar, form.action, [...fields(form.csrf), ['padding', 'x'.repeat(100_000)]]), 413],
        ['GET on the consent action', await auth.jar.fetch(new URL(form.action, server.url).href), 405],
      ];
      for (const [label, response, status] of attempts) {
        t.is(response.status, status, label);
        assertPageHeaders(t, response, label);
        t.regex(await response.text(), /Error code <code>[a-z_]+<\/code>/, label);
      }
      t.deepEqual(await rowCounts(server), before, 'nothing written');

      const accepted = await postForm(server.url, auth.jar, form.action, fields(form.csrf));
      t.is(accepted.status, 303);
      const replay = await postForm(server.url, auth.jar, form.action, fields(form.csrf));
      t.is(replay.status, 409, 'a replayed consent is refused');
      t.is((await rowCounts(server)).connections, 1, 'one consent, one connection');
    } finally {
      await server.close();
    }
  });

  test(`self-registered clients are asked for consent every time; an administrator's client reuses its grant [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const jar = new CookieJar();
      const first = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes });
      // Same browser session (signed in), same client: the consent page comes back.
      const again = await toConsent(server, 'alice@acme.example', { clientId: first.clientId, jar });
      t.regex(again.page.html!, /name="decision"/);
      const repeat = await toConsent(server, 'alice@acme.example', { clientId: first.clientId, jar });
      t.regex(repeat.page.html!, /name="decision"/, 'signed in already, still asked');
      t.notRegex(repeat.page.html!, /name="password"/);

      // A pre-registered client (web redirect URI, so not native): the second authorization in the
      // same session is answered without a consent page, on the same connection.
      const clientId = 'reg_test-client-0000000000';
      await addRegisteredClient(server, { clientId, name: 'Acme Assistant', redirectUri: 'https://assistant.acme.example/cb' });
      const registeredJar = new CookieJar();
      const code = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientId, redirectUri: 'https://assistant.acme.example/cb', jar: registeredJar });
      const tokens = await exchangeCode(server.url, { ...code, resource: server.forge });
      const auth: Authorization = await startAuthorization(server.url, { clientId, redirectUri: 'https://assistant.acme.example/cb', resource: server.forge, scopes, jar: registeredJar });
      const silent = await follow(server.url, registeredJar, auth.response);
      const code2 = new URL(silent.url).searchParams.get('code');
      t.truthy(code2, 'no consent page for the administrator\'s client');
      const tokens2 = await exchangeCode(server.url, { code: code2!, clientId, redirectUri: 'https://assistant.acme.example/cb', verifier: auth.verifier });
      const { db } = server.portico.context;
      t.is((await authenticateBearer(db, tokens2.accessToken, server.forge)).connectionId, (await authenticateBearer(db, tokens.accessToken, server.forge)).connectionId);
      t.is((await findConnectionByGrant(db, (await authenticateBearer(db, tokens.accessToken, server.forge)).grantId))?.client_kind, 'registered');
    } finally {
      await server.close();
    }
  });
}
