/**
 * RFC 7009 at /oauth/revoke with an access token revokes that token only (docs/auth.md): the
 * connection's refresh token and the access token of its last refresh keep working, and the
 * connection stays live. oidc-provider's own revoke helper would revoke every token of the grant.
 */import { findConnectionByGrant, authenticateBearer } from '../../../db/grant_store.js';
import { DEMO_PASSWORD, mcpTest, openSession, rawPost } from '../../helpers/mcp.js';
import { authorizeWithPassword, refresh, tokenRequest } from '../../helpers/oauth.js';

const list = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'forge.list_conversations', arguments: {} } });

mcpTest('revoking an old access token at /oauth/revoke leaves the refreshed access token and the refresh token working', async (t, server) => {
  const resource = `${server.mcpUrl}/forge`;
  const first = await authorizeWithPassword(server.url, { email: 'member@acme.example', password: DEMO_PASSWORD, tenant: 'acme', resource, scopes: ['forge.chat.read'] });
  // The client refreshes, then revokes the access token it no longer needs (RFC 7009 §2).
  const second = await refresh(server.url, { refreshToken: first.refreshToken!, clientId: first.clientId, resource });
  const revoked = await fetch(`${server.url}/oauth/revoke`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: first.accessToken, token_type_hint: 'access_token', client_id: first.clientId }).toString(),
  });
  t.is(revoked.status, 200);

  // The revoked token is refused ...
  const sessionId = await openSession(server, second.accessToken, 'forge');
  const old = await rawPost(server, 'forge', { token: first.accessToken, sessionId, body: list(1) }, 1);
  t.is(old.status, 401);
  // ... and nothing else of the connection died with it.
  const current = await rawPost(server, 'forge', { token: second.accessToken, sessionId, body: list(2) }, 2);
  t.is(current.status, 200, `the current access token was refused: ${current.text}`);
  const again = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: second.refreshToken!, client_id: first.clientId, resource });
  t.is(again.status, 200, `the refresh token was refused: ${await again.clone().text()}`);
  const principal = await authenticateBearer(server.db, ((await again.json()) as { access_token: string }).access_token, resource);
  t.falsy((await findConnectionByGrant(server.db, principal.grantId))?.revoked_at);
});
