/**
 * `client revoke` and `client remove` (the operator CLI): a client is cut off in every
 * organization at once (checklist J4). Revoked, each of its connections is refused and its refresh
 * tokens are spent, each organization's audit log says why, and people may connect it again.
 * Removed, its registration is gone too: it can neither start an authorization nor refresh.
 */
import test from 'ava';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeWithPassword, DEFAULT_REDIRECT_URI, metadataDocumentFetch, registerClient, startAuthorization, tokenRequest, type TokenSet } from '../helpers/oauth.js';
import { admin, PASSWORD, refusal, startAuthServer, type AuthServer } from './support.js';

const scopes = ['forge.chat.read'];

/** The token endpoint's answer to a refresh: the error, or 'ok'. */
async function refreshed(server: AuthServer, tokens: TokenSet): Promise<string> {
  const response = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: tokens.refreshToken!, client_id: tokens.clientId });
  const body = (await response.json()) as { error?: string };
  return response.status === 200 ? 'ok' : `${response.status} ${body.error}`;
}

for (const kind of databasesUnderTest()) {
  test(`client revoke cuts a client off in every organization; it may connect again [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    const { db } = server.portico.context;
    try {
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'Editor' });
      const connect = (email: string, tenant: string) => authorizeWithPassword(server.url, { email, password: PASSWORD, tenant, resource: server.forge, scopes, clientId });
      const acme = await connect('alice@acme.example', 'acme');
      const globex = await connect('bob@globex.example', 'globex');
      const other = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientName: 'Other' });

      const revoked = await admin(server, 'client', 'revoke', clientId);
      t.is(revoked.code, 0, revoked.err);
      t.is(revoked.out, `revoked 2 connection(s) of Editor (${clientId}) in 2 organization(s)`);
      for (const tokens of [acme, globex]) {
        t.is(await refusal(server, tokens.accessToken), 'connection_revoked: this connection was revoked');
        t.is(await refreshed(server, tokens), '400 invalid_grant');
      }
      t.is(await refusal(server, other.accessToken), undefined, 'another client of the same person is untouched');

      // Each organization's log says which connection went and why; the system log records the command.
      const records = await db('audit_log').whereIn('name', ['connection.revoke', 'client.revoke']).select('tenant_id', 'name', 'client_id', 'args_redacted');
      const sorted = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort();
      t.deepEqual(sorted(records.map((r) => [r.tenant_id, r.name, r.client_id, JSON.parse(r.args_redacted)])), sorted([
        [server.tenants.acme.id, 'connection.revoke', clientId, { reason: 'client revoked by an operator' }],
        [server.tenants.globex.id, 'connection.revoke', clientId, { reason: 'client revoked by an operator' }],
        [null, 'client.revoke', clientId, { client: `Editor (${clientId})`, revoked_connections: 2 }],
      ]));

      // Revoking is not removing: a person may connect the client again, and that connection works.
      const again = await connect('alice@acme.example', 'acme');
      t.is(await refusal(server, again.accessToken), undefined);
      t.is(await refreshed(server, again), 'ok');
      // A registration gone by other means (an unused one expired) leaves live connections that only revoke reaches.
      await db('oidc_payloads').where({ model: 'Client', id: clientId }).delete();
      const unregistered = await admin(server, 'client', 'remove', clientId);
      t.deepEqual([unregistered.code, unregistered.err], [3, `error: no registered client ${clientId} (1 live connection(s) of it remain: client revoke revokes them)`]);
      t.is((await admin(server, 'client', 'revoke', clientId)).out, `revoked 1 connection(s) of Editor (${clientId}) in 1 organization(s)`);
      t.is((await admin(server, 'client', 'revoke', clientId)).out, `Editor (${clientId}) has no live connections`);
    } finally {
      await server.close();
    }
  });

  test(`client remove revokes a client's connections and deletes its registration [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    const { db } = server.portico.context;
    try {
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'Editor' });
      const tokens = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientId });
      t.regex((await admin(server, 'client', 'list', '--all')).out, new RegExp(`^${clientId}\\s+Editor\\s`, 'm'));

      const removed = await admin(server, 'client', 'remove', clientId);
      t.is(removed.code, 0, removed.err);
      t.is(removed.out, `removed Editor (${clientId}); revoked 1 connection(s) in 1 organization(s)`);
      t.is(await refusal(server, tokens.accessToken), 'connection_revoked: this connection was revoked', 'a token it still holds is answered as revoked');
      t.is(await refreshed(server, tokens), '401 invalid_client');
      const authorization = await startAuthorization(server.url, { clientId, resource: server.forge, scopes });
      t.is(authorization.response.status, 400, 'an unknown client gets the error page, never a redirect');
      t.is(authorization.response.headers.get('location'), null);
      t.regex(await authorization.response.text(), /invalid_client/);
      t.is((await admin(server, 'client', 'list', '--all')).out, 'no clients');
      t.deepEqual(await db('oidc_payloads').where({ client_id: clientId }).whereNot('model', 'AccessToken').select('model'), [], 'nothing of it is left but its revoked access token');
      const record = await db('audit_log').where({ name: 'client.remove' }).first();
      t.deepEqual([record.tenant_id, record.client_id, JSON.parse(record.args_redacted)], [null, clientId, { client: `Editor (${clientId})`, revoked_connections: 1 }]);

      // Removed once, the client has no registration; revoke still finds it by its connections.
      const again = await admin(server, 'client', 'remove', clientId);
      t.is(again.code, 3);
      t.is(again.err, `error: no registered client ${clientId} (none of its connections is live)`);
      t.is((await admin(server, 'client', 'revoke', clientId)).out, `Editor (${clientId}) has no live connections`);
    } finally {
      await server.close();
    }
  });

  test(`client revoke cuts off a metadata-document client, which has no registration to remove [${kind}]`, async (t) => {
    const clientId = 'https://editor.example/oauth/client.json';
    const server = await startAuthServer(kind, { auth: { fetch: metadataDocumentFetch(clientId, { client_name: 'Hosted editor', redirect_uris: [DEFAULT_REDIRECT_URI], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }) } });
    try {
      const tokens = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientId });
      t.is(await refusal(server, tokens.accessToken), undefined);

      const removed = await admin(server, 'client', 'remove', clientId);
      t.is(removed.code, 1);
      t.is(await refusal(server, tokens.accessToken), undefined, 'a refused remove revokes nothing');
      const revoked = await admin(server, 'client', 'revoke', clientId);
      t.is(revoked.code, 0, revoked.err);
      t.is(revoked.out, `revoked 1 connection(s) of Hosted editor (${clientId}) in 1 organization(s)`);
      t.is(await refusal(server, tokens.accessToken), 'connection_revoked: this connection was revoked');
      t.is(await refreshed(server, tokens), '400 invalid_grant');
    } finally {
      await server.close();
    }
  });

  test(`client revoke and client remove refuse what they cannot do, and change nothing [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    const { db } = server.portico.context;
    try {
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'Editor' });
      const tokens = await authorizeWithPassword(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes, clientId });
      const before = await db('audit_log').count({ n: '*' }).first();
      const cases: Array<[string[], number, RegExp]> = [
        [['client', 'revoke'], 2, /^error: client revoke needs a client id \(client list --all shows them\)\nusage: npm run admin -- client revoke <client_id>/],
        [['client', 'remove', clientId, 'dcr_other'], 2, /^error: client remove takes a client id, got 2 arguments\nusage: /],
        [['client', 'revoke', '--all', clientId], 2, /^error: Unknown option '--all'/],
        [['client', 'revoke', 'dcr_nobody'], 3, /^error: no client dcr_nobody \(client list --all shows them\)$/],
        [['client', 'remove', 'reg_nobody'], 3, /^error: no client reg_nobody \(client list --all shows them\)$/],
        [['client', 'remove', 'https://app.example/client.json'], 1, /^error: https:\/\/app\.example\/client\.json is a metadata-document client: .* client revoke revokes its connections$/],
      ];
      for (const [argv, code, err] of cases) {
        const result = await admin(server, ...argv);
        t.is(result.code, code, argv.join(' '));
        t.regex(result.err, err, argv.join(' '));
        t.is(result.out, '');
      }
      t.deepEqual(await db('audit_log').count({ n: '*' }).first(), before, 'nothing recorded');
      t.is(await refusal(server, tokens.accessToken), undefined, 'nothing revoked');
      t.is(await refreshed(server, tokens), 'ok');
    } finally {
      await server.close();
    }
  });
}
