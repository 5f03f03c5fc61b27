import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { startConsole } from './setup.js';
import { authenticateBearer } from '../../db/grant_store.js';
import { isAppError } from '../../shared/errors.js';

type Json = any; // response bodies are asserted field by field

for (const kind of databasesUnderTest()) {
  test(`an admin sees the whole tenant, a member only their own connections [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const list: Json = await (await f.api('/connections', admin)).json();
      const forgeIds = list.connections.filter((c: Json) => c.product === 'forge').map((c: Json) => c.id).sort();
      t.deepEqual(forgeIds, [f.forge.ann.connection.id, f.forge.bob.connection.id].sort());
      const entry = list.connections.find((c: Json) => c.id === f.forge.ann.connection.id);
      t.like(entry, { product: 'forge', user: { email: 'ann@acme.example' }, client: { self_registered: true }, call_count: 0, revoked_at: null });
      t.deepEqual(entry.scopes.map((s: Json) => s.scope), ['forge.chat.read', 'forge.chat.write']);

      const ann = await f.consoleToken('ann', 'acme');
      const own: Json = await (await f.api('/connections', ann)).json();
      t.true(own.connections.every((c: Json) => c.user.email === 'ann@acme.example'));
      t.true(own.connections.some((c: Json) => c.id === f.forge.ann.connection.id));

      const peek = await f.api(`/connections/${f.forge.bob.connection.id}`, ann);
      t.is(peek.status, 403);
      t.is(((await peek.json()) as Json).error.code, 'forbidden');
      const revoke = await f.api(`/connections/${f.forge.bob.connection.id}`, ann, { method: 'DELETE' });
      t.is(revoke.status, 403);
      t.is(((await revoke.json()) as Json).error.code, 'forbidden');
      const { db, config } = f.server.portico.context;
      t.truthy(await authenticateBearer(db, f.forge.bob.token, `${config.mcpUrl}/forge`), "bob's connection still works");
    } finally {
      await f.close();
    }
  });

  test(`the API reads the role with the token: a demoted admin sees only their own connections at once, a removed member is refused [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const { db } = f.server.portico.context;
      const multi = await f.consoleToken('multi', 'globex');
      const before: Json = await (await f.api('/connections', multi)).json();
      t.true(before.connections.some((c: Json) => c.id === f.forge.globexAdmin.connection.id), 'as an admin, multi sees the tenant');

      await db('memberships').where({ user_id: f.users.multi, tenant_id: f.tenants.globex }).update({ role: 'member' });
      const after: Json = await (await f.api('/connections', multi)).json();
      t.false(after.connections.some((c: Json) => c.id === f.forge.globexAdmin.connection.id), 'as a member, no longer');

      await db('memberships').where({ user_id: f.users.multi, tenant_id: f.tenants.globex }).delete();
      const gone = await f.api('/connections', multi);
      t.is(gone.status, 401);
      t.is(((await gone.json()) as Json).error.code, 'connection_revoked');
      t.regex(gone.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    } finally {
      await f.close();
    }
  });

  test(`a token without console.connections.write cannot revoke [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const readOnly = await f.consoleToken('acmeAdmin', 'acme', ['console.connections.read', 'console.audit.read']);
      const response = await f.api(`/connections/${f.forge.ann.connection.id}`, readOnly, { method: 'DELETE' });
      t.is(response.status, 403);
      t.is(((await response.json()) as Json).error.code, 'insufficient_scope');
      t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer error="insufficient_scope", scope="console\.connections\.write"/);
      const { db, config } = f.server.portico.context;
      t.truthy(await authenticateBearer(db, f.forge.ann.token, `${config.mcpUrl}/forge`));
      t.is(f.published.length, 0);
    } finally {
      await f.close();
    }
  });

  test(`console.connections.write alone is enough to revoke [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const writeOnly = await f.consoleToken('acmeAdmin', 'acme', ['console.connections.write']);
      const response = await f.api(`/connections/${f.forge.ann.connection.id}`, writeOnly, { method: 'DELETE' });
      const body: Json = await response.json();
      t.is(response.status, 200, JSON.stringify(body));
      t.is(body.already_revoked, false);
      const { db, config } = f.server.portico.context;
      const error = await t.throwsAsync(authenticateBearer(db, f.forge.ann.token, `${config.mcpUrl}/forge`));
      t.true(isAppError(error) && error.code === 'connection_revoked');
      // It still cannot read: the listing wants the read scope.
      t.is((await f.api('/connections', writeOnly)).status, 403);
    } finally {
      await f.close();
    }
  });

  test(`acme's admin cannot see globex's connections or audit [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const foreign = f.forge.globexAdmin.connection.id;
      for (const variant of [foreign, foreign.toUpperCase(), ` ${foreign}`, encodeURIComponent(foreign)]) {
        const response = await f.api(`/connections/${encodeURIComponent(variant)}`, admin);
        t.is(response.status, 403, variant);
        const body: Json = await response.json();
        t.is(body.error.code, 'forbidden_cross_tenant');
        t.false(JSON.stringify(body).includes('globex'), 'nothing of the foreign connection leaks');
      }
      const del = await f.api(`/connections/${foreign}`, admin, { method: 'DELETE' });
      t.is(del.status, 403);
      t.is(((await del.json()) as Json).error.code, 'forbidden_cross_tenant');
      const audit = await f.api(`/audit?connection=${foreign}`, admin);
      t.is(audit.status, 403);
      t.is(((await audit.json()) as Json).error.code, 'forbidden_cross_tenant');
      const list: Json = await (await f.api('/connections', admin)).json();
      t.false(list.connections.some((c: Json) => c.id === foreign));
      const records: Json = await (await f.api('/audit', admin)).json();
      t.true(records.records.every((r: Json) => r.tenant_id === f.tenants.acme));
    } finally {
      await f.close();
    }
  });

  test(`revoking through the API kills the connection at once and is audited [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      const response = await f.api(`/connections/${f.forge.ann.connection.id}`, admin, { method: 'DELETE' });
      t.is(response.status, 200);
      const body: Json = await response.json();
      t.is(body.already_revoked, false);
      t.truthy(body.revoked_at);
      const { db, config } = f.server.portico.context;
      const error = await t.throwsAsync(authenticateBearer(db, f.forge.ann.token, `${config.mcpUrl}/forge`));
      t.true(isAppError(error) && error.code === 'connection_revoked');
      t.deepEqual(f.published, [{ type: 'connection.revoked', connectionId: f.forge.ann.connection.id, grantId: f.forge.ann.connection.grant_id }]);
      t.is(Number((await db('oidc_payloads').where({ grant_id: f.forge.ann.connection.grant_id, model: 'RefreshToken' }).count({ n: '*' }).first())?.n), 0);
      t.is(await db('oidc_payloads').where({ model: 'Grant', id: f.forge.ann.connection.grant_id }).first(), undefined, 'the grant is gone');
      const audit: Json = await (await f.api(`/audit?tool=connection.revoke`, admin)).json();
      t.is(audit.records.length, 1);
      t.like(audit.records[0], { kind: 'auth', connection_id: f.forge.ann.connection.id, user_id: f.users.acmeAdmin, outcome: 'ok' });
      const again: Json = await (await f.api(`/connections/${f.forge.ann.connection.id}`, admin, { method: 'DELETE' })).json();
      t.is(again.already_revoked, true);
      t.is(again.revoked_at, body.revoked_at, 'the first answer carried the stored revocation time');
      // The API's own connection counts its calls like any other connection.
      const own = async () => ((await (await f.api('/connections', admin)).json()) as Json).connections.find((c: Json) => c.product === 'console');
      const first = await own();
      t.true(first.call_count >= 4, JSON.stringify(first));
      t.truthy(first.last_used_at);
      t.is((await own()).call_count, first.call_count + 1);
      t.is(((await (await f.api(`/audit?tool=connection.revoke`, admin)).json()) as Json).records.length, 1, 'a second revoke is not audited twice');
    } finally {
      await f.close();
    }
  });

  test(`the API refuses missing tokens and bad parameters with stable codes [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    try {
      const none = await fetch(`${f.server.url}/api/mcp/v1/connections`);
      t.is(none.status, 401);
      t.is(((await none.json()) as Json).error.code, 'invalid_token');
      t.regex(none.headers.get('www-authenticate') ?? '', /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/api\/mcp\/v1\/connections"/);
      const forgeToken = await f.api('/connections', f.forge.ann.token);
      t.is(forgeToken.status, 401, 'a product token is not a console token');
      const admin = await f.consoleToken('acmeAdmin', 'acme');
      for (const [query, message] of [['limit=0', /limit/], ['limit=abc', /limit/], ['cursor=nope', /cursor/], ['from=yesterday', /from/], ['kind=magic', /kind/], ['connection=12', /connection/]] as const) {
        const response = await f.api(`/audit?${query}`, admin);
        t.is(response.status, 400, query);
        const body: Json = await response.json();
        t.is(body.error.code, 'invalid_request');
        t.regex(body.error.message, message);
      }
      for (const [query, message] of [
        ['include_revoked=maybe', /include_revoked must be true or false/],
        ['include_revoked=true&include_revoked=false', /include_revoked may be given once/],
      ] as const) {
        const response = await f.api(`/connections?${query}`, admin);
        t.is(response.status, 400, query);
        t.regex(((await response.json()) as Json).error.message, message, query);
      }
      // Empty is absent, as for every parameter (limit=, the pages' revoked=): false.
      const ids = async (query: string) => {
        const response = await f.api(`/connections${query}`, admin);
        t.is(response.status, 200, query);
        return ((await response.json()) as Json).connections.map((c: Json) => c.id);
      };
      t.is((await f.api(`/connections/${f.forge.bob.connection.id}`, admin, { method: 'DELETE' })).status, 200);
      const live = await ids('');
      t.false(live.includes(f.forge.bob.connection.id));
      t.deepEqual(await ids('?include_revoked='), live);
      t.deepEqual(await ids('?include_revoked=false'), live);
      t.true((await ids('?include_revoked=true')).includes(f.forge.bob.connection.id));
      const format = await f.api('/audit/export?format=xml', admin);
      t.is(format.status, 400);
      const missing = await f.api('/connections/00000000-0000-4000-8000-000000000000', admin);
      t.is(missing.status, 404);
      t.is(((await missing.json()) as Json).error.code, 'not_found');
      const prm: Json = await (await fetch(`${f.server.url}/.well-known/oauth-protected-resource/api/mcp`)).json();
      t.deepEqual(prm.scopes_supported, ['console.connections.read', 'console.connections.write', 'console.audit.read']);
      t.is(prm.resource, `${f.server.url}/api/mcp`);
    } finally {
      await f.close();
    }
  });
}
