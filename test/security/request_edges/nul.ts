/**
 * U+0000 anywhere in a request. PostgreSQL refuses the character in text, so before these checks
 * a NUL in a tool argument or an OAuth client_id was a 500 there (and a stored row on SQLite):
 * now every way in refuses it clearly, on both databases, and nothing is written.
 */
import { authenticate } from '../../../db/accounts.js';
import { auditOf, grant, mcpTest, openSession, rawCall } from '../../helpers/mcp.js';
import { tokenRequest } from '../../helpers/oauth.js';

mcpTest('a NUL in a tool argument is invalid_arguments naming the field, audited, and nothing is written', async (t, server) => {
  const { token } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read', 'forge.chat.write'] });
  const sessionId = await openSession(server, token, 'forge');
  const before = Number((await server.db('forge_conversations').count({ n: '*' }).first())?.n);
  const created = await rawCall(server, token, 'forge', 'tools/call', { name: 'forge.create_conversation', arguments: { title: 'a\u0000b' } }, { sessionId });
  t.is(created.body.error?.code, -32602, created.text);
  t.is(created.body.error.data.code, 'invalid_arguments');
  t.is(created.body.error.data.field, 'title');
  t.is(Number((await server.db('forge_conversations').count({ n: '*' }).first())?.n), before);
  t.deepEqual((await auditOf(server, 'acme', { name: 'forge.create_conversation' })).map((r) => r.outcome), ['invalid_arguments']);
});

mcpTest('a NUL in an OAuth parameter, a form or a URL is a 4xx, never a server error', async (t, server) => {
  const refresh = await tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: 'a\u0000b', client_id: 'dcr_x\u0000' });
  t.is(refresh.status, 401, await refresh.clone().text());
  t.is(((await refresh.json()) as { error: string }).error, 'invalid_client');
  const authorize = await fetch(`${server.url}/oauth/authorize?client_id=a%00b&response_type=code&redirect_uri=http://127.0.0.1/cb&code_challenge=x&code_challenge_method=S256`, { redirect: 'manual' });
  t.is(authorize.status, 400);
  const login = await fetch(`${server.url}/api/mcp/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=a%00b%40acme.example&password=x&csrf=y' });
  t.is(login.status, 400);
  const audit = await fetch(`${server.url}/api/mcp/v1/audit?product=forge%00`);
  t.is(audit.status, 400);
  t.is(((await audit.json()) as { error: { code: string } }).error.code, 'invalid_request');
  t.is(await authenticate(server.db, 'admin@acme.example\u0000', 'whatever'), undefined);
  t.is((await fetch(`${server.url}/healthz`)).status, 200, 'still serving');
});
