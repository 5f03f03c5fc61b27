/**
 * Resource indicators (RFC 8707, checklist E1-E2): a token is bound to exactly one product
 * server; a request without `resource` gets the product its scopes imply, or invalid_target;
 * products that are not live are not resources until they ship.
 */
import test from 'ava';
import { authenticateBearer } from '../../db/grant_store.js';
import { isAppError } from '../../shared/errors.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeCode, authorizeWithPassword, errorReturnOf, exchangeCode, registerClient, startAuthorization, tokenRequest } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer } from './support.js';

const alice = { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme' };

async function introspect(url: string, token: string, clientId: string) {
  const response = await fetch(`${url}/oauth/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token, client_id: clientId }) });
  return (await response.json()) as { active: boolean; aud?: string; scope?: string; client_id?: string; tenant_id?: string };
}

for (const kind of databasesUnderTest()) {
  test(`a token for /mcp/forge is not valid for /mcp/aegis [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      const tokens = await authorizeWithPassword(server.url, { ...alice, resource: server.forge, scopes: ['forge.chat.read'] });
      t.is((await authenticateBearer(db, tokens.accessToken, server.forge)).product, 'forge');
      const error = await authenticateBearer(db, tokens.accessToken, server.aegis).catch((e: unknown) => e);
      t.true(isAppError(error) && error.code === 'invalid_token');
      const error2 = await authenticateBearer(db, tokens.accessToken, `${server.forge}/`).catch((e: unknown) => e);
      t.true(isAppError(error2) && error2.code === 'invalid_token', 'the audience is one exact string');

      const info = await introspect(server.url, tokens.accessToken, tokens.clientId);
      t.true(info.active);
      t.is(info.aud, server.forge);
      t.is(info.scope, 'forge.chat.read');
      t.is(info.tenant_id, server.tenants.acme.id);

      // The same client asking for aegis gets a second, separate connection.
      const aegis = await authorizeWithPassword(server.url, { ...alice, resource: server.aegis, scopes: ['aegis.scans.read'], clientId: tokens.clientId });
      const principal = await authenticateBearer(db, aegis.accessToken, server.aegis);
      t.not(principal.connectionId, (await authenticateBearer(db, tokens.accessToken, server.forge)).connectionId);
      t.deepEqual([...principal.scopes], ['aegis.scans.read']);
      t.is((await introspect(server.url, aegis.accessToken, tokens.clientId)).aud, server.aegis);

      // A refresh cannot switch product.
      const switched = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId, resource: server.aegis });
      t.is(switched.status, 400);
      t.is(((await switched.json()) as { error: string }).error, 'invalid_target');
      const both = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId, resource: [server.forge, server.aegis] });
      t.is(((await both.json()) as { error: string }).error, 'invalid_target');
      // Nor can another product's scope ride on the forge grant.
      const widened = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId, scope: 'forge.chat.read forge.chat.write' });
      t.is(((await widened.json()) as { error: string }).error, 'invalid_scope');
      // The refusals spent nothing: the same refresh token still works, and the connection lives.
      const refreshed = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId, resource: server.forge });
      t.is(refreshed.status, 200, await refreshed.clone().text());
      const fresh = (await refreshed.json()) as { access_token: string };
      t.is((await authenticateBearer(db, fresh.access_token, server.forge)).connectionId, (await authenticateBearer(db, tokens.accessToken, server.forge)).connectionId);
    } finally {
      await server.close();
    }
  });

  test(`without a resource, the product is implied by the scopes, or the request is refused clearly [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const code = await authorizeCode(server.url, { ...alice, scopes: ['forge.chat.read', 'forge.chat.write'] });
      const tokens = await exchangeCode(server.url, code);
      const principal = await authenticateBearer(server.portico.context.db, tokens.accessToken, server.forge);
      t.is(principal.resource, server.forge);
      t.deepEqual([...principal.scopes].sort(), ['forge.chat.read', 'forge.chat.write']);
      // `email`, a scope registration accepts, names no product either: it does not make the
      // scopes look like two products (it was refused "belong to more than one product").
      const withEmail = await exchangeCode(server.url, await authorizeCode(server.url, { ...alice, scopes: ['openid', 'email', 'forge.chat.read'] }));
      const emailed = await authenticateBearer(server.portico.context.db, withEmail.accessToken, server.forge);
      t.is(emailed.resource, server.forge);
      t.deepEqual([...emailed.scopes], ['forge.chat.read']);

      const { client_id: clientId } = await registerClient(server.url);
      const cases: Array<[string, Parameters<typeof startAuthorization>[1], RegExp]> = [
        ['two products', { clientId, scopes: ['forge.chat.read', 'aegis.scans.read'] }, /more than one product/],
        ['no product scope', { clientId, scopes: ['openid'] }, /no resource requested/],
        ['no product scope but email', { clientId, scopes: ['openid', 'email'] }, /no resource requested/],
        ['an unknown resource', { clientId, resource: 'https://evil.example/mcp/forge', scopes: ['forge.chat.read'] }, /unknown resource/],
        ['a fragment', { clientId, resource: `${server.forge}#x`, scopes: ['forge.chat.read'] }, /fragment/],
        ['a relative resource', { clientId, resource: '/mcp/forge', scopes: ['forge.chat.read'] }, /absolute URI/],
        ['a product that does not exist', { clientId, resource: `${server.url}/mcp/zeus`, scopes: ['forge.chat.read'] }, /unknown resource/],
      ];
      for (const [label, options, description] of cases) {
        const attempt = await startAuthorization(server.url, options);
        const location = await errorReturnOf(attempt.response);
        t.is(location.searchParams.get('error'), 'invalid_target', label);
        t.regex(location.searchParams.get('error_description') ?? '', description, label);
      }
      // A resource asked for with none of its own scopes: nothing to consent to.
      const foreign = await startAuthorization(server.url, { clientId, resource: server.forge, scopes: ['aegis.scans.read', 'nope.scope'] });
      const refused = await errorReturnOf(foreign.response);
      t.is(refused.searchParams.get('error'), 'invalid_scope');
      t.regex(refused.searchParams.get('error_description') ?? '', /none of the requested scopes belong to .*\/mcp\/forge/);
      const several = await fetch(`${server.url}/oauth/authorize?${new URLSearchParams([
        ['client_id', clientId], ['redirect_uri', 'http://127.0.0.1/callback'], ['response_type', 'code'], ['scope', 'forge.chat.read aegis.scans.read'],
        ['code_challenge', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'], ['code_challenge_method', 'S256'], ['resource', server.forge], ['resource', server.aegis],
      ])}`, { redirect: 'manual' });
      t.is((await errorReturnOf(several)).searchParams.get('error'), 'invalid_target', 'one resource per authorization');
    } finally {
      await server.close();
    }
  });

  test(`a roadmap product can be connected before it ships; shipping advertises its scopes without a restart [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const midas = `${server.url}/mcp/midas`;
      const before = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as { scopes_supported: string[] };
      t.false(before.scopes_supported.includes('midas.ledger.read'));
      const early = await authorizeWithPassword(server.url, { ...alice, resource: midas, scopes: ['midas.ledger.read'] });
      t.is((await authenticateBearer(server.portico.context.db, early.accessToken, midas)).product, 'midas');
      server.live.add('midas');
      const after = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as { scopes_supported: string[] };
      t.true(after.scopes_supported.includes('midas.ledger.read'));
      const tokens = await authorizeWithPassword(server.url, { ...alice, resource: midas, scopes: ['midas.ledger.read'] });
      t.is((await authenticateBearer(server.portico.context.db, tokens.accessToken, midas)).product, 'midas');
    } finally {
      await server.close();
    }
  });

  test(`the console API is a resource with its own scopes and connection [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const consoleResource = `${server.url}/api/mcp`;
      const tokens = await authorizeWithPassword(server.url, { ...alice, resource: consoleResource, scopes: ['console.connections.read', 'console.audit.read'] });
      const principal = await authenticateBearer(server.portico.context.db, tokens.accessToken, consoleResource);
      t.is(principal.product, 'console');
      t.deepEqual([...principal.scopes].sort(), ['console.audit.read', 'console.connections.read']);
      const implied = await authorizeWithPassword(server.url, { ...alice, scopes: ['console.connections.write'] });
      t.is((await authenticateBearer(server.portico.context.db, implied.accessToken, consoleResource)).product, 'console');
    } finally {
      await server.close();
    }
  });
}
