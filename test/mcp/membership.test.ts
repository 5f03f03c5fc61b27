/**
 * Membership changes, suspensions and revoked clients reach the MCP servers: `member remove`,
 * `member role`, `tenant suspend` and `client revoke` (the admin CLI, a separate process from the
 * server) revoke what may no longer be held, on every database; the next call is refused and open
 * GET streams close. Membership and suspension are also read with every token, so a connection
 * made in the moment before such a change committed is refused too.
 */
import type { ExecutionContext } from 'ava';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { runAdmin } from '../../scripts/admin.js';
import type { PorticoEvent } from '../../shared/events.js';
import { membershipsOf } from '../../db/accounts.js';
import { revokeConnection } from '../../db/grant_store.js';
import { auditOf, grant, mcpTest, openSession, rawCall, type McpTestServer, type RawResponse } from '../helpers/mcp.js';

const LIST = { name: 'forge.list_conversations', arguments: {} };

async function cli(server: McpTestServer, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { DATABASE_URL: server.database.url });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** An open GET stream of a fresh session; `ended` resolves true when the server closes it (false after 10 s). */
async function openStream(server: McpTestServer, token: string, product: string): Promise<{ sessionId: string; ended: Promise<boolean> }> {
  const sessionId = await openSession(server, token, product);
  const stream = await fetch(`${server.mcpUrl}/${product}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
  });
  if (stream.status !== 200) throw new Error(`GET stream refused: ${stream.status}`);
  const reader = stream.body!.getReader();
  const ended = Promise.race([
    (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })(),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), 10_000).unref()),
  ]);
  return { sessionId, ended };
}

function assertRevoked(t: ExecutionContext, response: RawResponse, message: RegExp) {
  t.is(response.status, 401, response.text);
  t.is(response.body.error.data.code, 'connection_revoked');
  t.regex(response.body.error.message, message);
  t.regex(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
}

mcpTest('removing a member revokes their connections in that organization: the next call is refused and open streams close', async (t, server) => {
  const acme = await grant(server, { product: 'forge', tenant: 'acme', user: 'multi@example.com', scopes: ['forge.chat.read'] });
  const globex = await grant(server, { product: 'forge', tenant: 'globex', user: 'multi@example.com', scopes: ['forge.chat.read'] });
  const stream = await openStream(server, acme.token, 'forge');
  // Served once before, so the principal is in the instance's cache: removal must reach that too.
  t.is((await rawCall(server, acme.token, 'forge', 'tools/call', LIST, { sessionId: stream.sessionId })).status, 200);

  const heard = new Promise<PorticoEvent>((resolve) => server.events.on((event) => event.type === 'connection.revoked' && resolve(event)));

  const removed = await cli(server, ['member', 'remove', '--tenant', 'acme', '--email', 'Multi@Example.com']);
  t.is(removed.code, 0, removed.err);
  t.regex(removed.out, /^removed multi@example\.com from acme; revoked 1 connection\(s\): .* → forge$/);

  // The server heard the CLI's event (LISTEN/NOTIFY on PostgreSQL, the events file on SQLite), not only its periodic check.
  t.deepEqual(await heard, { type: 'connection.revoked', connectionId: acme.connection.id, grantId: acme.connection.grant_id });
  t.true(await stream.ended, 'the GET stream closed');
  assertRevoked(t, await rawCall(server, acme.token, 'forge', 'tools/call', LIST), /revoked/);
  // Their other organization is not touched.
  t.is((await rawCall(server, globex.token, 'forge', 'tools/call', LIST)).status, 200);

  const [record] = await auditOf(server, 'acme', { name: 'member.remove' });
  t.like(JSON.parse(record.args_redacted!), { email: 'multi@example.com', role: 'member', revoked_connections: 1 });
  const revocations = await auditOf(server, 'acme', { name: 'connection.revoke', connection_id: acme.connection.id });
  t.deepEqual(revocations.map((r) => JSON.parse(r.args_redacted!)), [{ reason: 'membership removed' }]);
  t.is(await server.db('memberships').where({ user_id: server.users['multi@example.com'], tenant_id: server.tenants.acme.id }).first(), undefined);
});

mcpTest('revoking a client cuts off its connections in every organization: calls are refused and open streams close', async (t, server) => {
  const clientId = 'dcr_editor';
  const acme = await grant(server, { product: 'forge', tenant: 'acme', user: 'multi@example.com', scopes: ['forge.chat.read'], clientId });
  const globex = await grant(server, { product: 'forge', tenant: 'globex', scopes: ['forge.chat.read'], clientId });
  const other = await grant(server, { product: 'forge', tenant: 'acme', user: 'multi@example.com', scopes: ['forge.chat.read'] });
  const streams = [await openStream(server, acme.token, 'forge'), await openStream(server, globex.token, 'forge')];
  for (const { token } of [acme, globex]) t.is((await rawCall(server, token, 'forge', 'tools/call', LIST)).status, 200);

  const heard = new Set<string>();
  const bothHeard = new Promise<void>((resolve) => server.events.on((event) => {
    if (event.type === 'connection.revoked') heard.add(event.connectionId);
    if (heard.size === 2) resolve();
  }));
  const revoked = await cli(server, ['client', 'revoke', clientId]);
  t.is(revoked.code, 0, revoked.err);
  t.is(revoked.out, `revoked 2 connection(s) of Test client (${clientId}) in 2 organization(s)`);

  await bothHeard;
  t.deepEqual([...heard].sort(), [acme.connection.id, globex.connection.id].sort());
  for (const stream of streams) t.true(await stream.ended, 'the GET stream closed');
  for (const { token } of [acme, globex]) assertRevoked(t, await rawCall(server, token, 'forge', 'tools/call', LIST), /revoked/);
  t.is((await rawCall(server, other.token, 'forge', 'tools/call', LIST)).status, 200, 'another client of the same person is untouched');
  for (const [tenant, { connection }] of [['acme', acme], ['globex', globex]] as const) {
    const revocations = await auditOf(server, tenant, { name: 'connection.revoke', connection_id: connection.id });
    t.deepEqual(revocations.map((r) => JSON.parse(r.args_redacted!)), [{ reason: 'client revoked by an operator' }]);
  }
});

mcpTest('a connection whose person is no longer a member is refused even if nothing revoked it', async (t, server) => {
  // The moment between the consent page reading the membership and an operator's removal committing.
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', user: 'member@acme.example', scopes: ['forge.chat.read'] });
  await server.db('memberships').where({ user_id: server.users['member@acme.example'], tenant_id: server.tenants.acme.id }).delete();
  assertRevoked(t, await rawCall(server, token, 'forge', 'tools/call', LIST), /no longer a member/);
  t.is((await server.db('connections').where({ id: connection.id }).first()).revoked_at, null, 'the refusal did not need a revocation');
});

mcpTest('demoting an administrator ends their connections to admin-only products and keeps the others', async (t, server) => {
  const aegis = await grant(server, { product: 'aegis', tenant: 'acme', scopes: ['aegis.findings.read'] });
  const forge = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const stream = await openStream(server, aegis.token, 'aegis');

  // acme's only administrator cannot be demoted: the organization would have none.
  const refused = await cli(server, ['member', 'role', '--tenant', 'acme', '--email', 'admin@acme.example', '--role', 'member']);
  t.is(refused.code, 1);
  t.is(refused.err, 'error: this is the last administrator of the tenant: make another member an administrator first');
  t.is((await rawCall(server, aegis.token, 'aegis', 'tools/list', {}, { sessionId: stream.sessionId })).status, 200);

  t.is((await cli(server, ['member', 'role', '--tenant', 'acme', '--email', 'member@acme.example', '--role', 'admin'])).out, 'member@acme.example is now admin in acme');
  const demoted = await cli(server, ['member', 'role', '--tenant', 'acme', '--email', 'admin@acme.example', '--role', 'member']);
  t.is(demoted.code, 0, demoted.err);
  t.regex(demoted.out, /^admin@acme\.example is now member in acme; revoked 1 connection\(s\): .* → aegis$/);

  t.true(await stream.ended, 'the aegis stream closed');
  assertRevoked(t, await rawCall(server, aegis.token, 'aegis', 'tools/list', {}), /revoked/);
  t.is((await rawCall(server, forge.token, 'forge', 'tools/call', LIST)).status, 200);
  const [record] = await auditOf(server, 'acme', { name: 'member.role', user_id: server.users['admin@acme.example'] });
  t.like(JSON.parse(record.args_redacted!), { from: 'admin', to: 'member', revoked_connections: 1 });
});

mcpTest('a member’s connection to an admin-only product is refused, however it was made', async (t, server) => {
  // Consent never offers aegis to a member; a grant made behind its back (or just before a demotion) is still refused.
  const { token } = await grant(server, { product: 'aegis', tenant: 'acme', user: 'member@acme.example', scopes: ['aegis.findings.read'] });
  assertRevoked(t, await rawCall(server, token, 'aegis', 'tools/list', {}), /only administrators/);
});

mcpTest('suspending an organization under load: once the server hears it no call of it succeeds, others go on, its audit chain verifies; resuming lets people connect anew', async (t, server) => {
  const acme = [
    await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] }),
    await grant(server, { product: 'forge', tenant: 'acme', user: 'member@acme.example', scopes: ['forge.chat.read'] }),
  ];
  const globex = await grant(server, { product: 'forge', tenant: 'globex', scopes: ['forge.chat.read'] });
  const stream = await openStream(server, acme[1].token, 'forge');

  let heardAt = Infinity;
  const pending = new Set(acme.map((g) => g.connection.id));
  const heard = new Promise<void>((resolve) => server.events.on((event) => {
    if (event.type === 'connection.revoked' && pending.delete(event.connectionId) && !pending.size) {
      heardAt = performance.now();
      resolve();
    }
  }));
  const calls: Array<{ tenant: string; startedAt: number; status: number }> = [];
  // Checked after every call: resolves once the calls made so far are `enough`.
  let called: () => void = () => undefined;
  const callsUntil = (enough: () => boolean) => new Promise<void>((resolve) => {
    called = () => {
      if (enough()) resolve();
    };
    called();
  });
  let running = true;
  // Sessions open before the load starts: the suspension must meet clients already connected.
  const sessions = new Map(await Promise.all([acme[0].token, acme[1].token, globex.token].map(async (token) => [token, await openSession(server, token, 'forge')] as const)));
  let nextId = 1;
  const caller = async (tenant: string, token: string) => {
    const sessionId = sessions.get(token)!;
    while (running) {
      const startedAt = performance.now();
      // Two callers share globex's session: each request has its own id, as JSON-RPC requires of those in flight.
      const response = await rawCall(server, token, 'forge', 'tools/call', LIST, { sessionId, id: nextId++ });
      calls.push({ tenant, startedAt, status: response.status });
      called();
    }
  };
  const callers = [caller('acme', acme[0].token), caller('acme', acme[1].token), caller('globex', globex.token), caller('globex', globex.token)];
  await callsUntil(() => calls.filter((c) => c.tenant === 'acme' && c.status === 200).length >= 4);

  const suspended = await cli(server, ['tenant', 'suspend', 'acme']);
  t.is(suspended.code, 0, suspended.err);
  t.regex(suspended.out, /^suspended acme; revoked 2 connection\(s\)/);
  await heard;
  await callsUntil(() => calls.filter((c) => c.tenant === 'acme' && c.startedAt > heardAt).length >= 2);
  running = false;
  await Promise.all(callers);

  const acmeCalls = calls.filter((c) => c.tenant === 'acme');
  t.true(acmeCalls.some((c) => c.startedAt < heardAt && c.status === 200), 'acme was served before');
  const after = acmeCalls.filter((c) => c.startedAt > heardAt);
  t.true(after.length > 0, 'acme clients kept calling');
  t.deepEqual(after.filter((c) => c.status === 200), [], 'no acme call started after the server heard it succeeded');
  t.deepEqual([...new Set(calls.filter((c) => c.tenant === 'globex').map((c) => c.status))], [200], 'globex was not touched');
  t.true(await stream.ended, 'the open stream closed');

  // Nobody signs in to it or connects: it is not among the person's organizations, and a grant made behind the consent page's back is refused.
  t.deepEqual(await membershipsOf(server.db, server.users['admin@acme.example']), []);
  const fresh = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  assertRevoked(t, await rawCall(server, fresh.token, 'forge', 'tools/call', LIST), /the organization is suspended/);
  t.regex((await cli(server, ['tenant', 'list'])).out, /^acme\s+.*\bsuspended\b/m);
  t.is((await cli(server, ['tenant', 'suspend', 'acme'])).out, 'acme is already suspended');

  // Its records survive and verify, the refusals after the suspension included.
  const verified = await cli(server, ['audit', 'verify', '--tenant', 'acme']);
  t.is(verified.code, 0, verified.err);
  t.regex(verified.out, /^ok: \d+ records verified\nchain end: \d+:[0-9a-f]{64}$/);
  t.is((await auditOf(server, 'acme', { name: 'tenant.suspend' })).length, 1);

  t.is((await cli(server, ['tenant', 'resume', 'acme'])).out, 'resumed acme');
  assertRevoked(t, await rawCall(server, acme[0].token, 'forge', 'tools/call', LIST), /revoked/);
  const again = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  t.is((await rawCall(server, again.token, 'forge', 'tools/call', LIST)).status, 200, 'a connection made after resuming works');
  t.is((await cli(server, ['tenant', 'resume', 'acme'])).out, 'acme is not suspended');
});

mcpTest('a revocation nobody announced (a notification lost with its process) still closes streams and cached tokens within seconds', async (t, server) => {
  const { token, connection } = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const stream = await openStream(server, token, 'forge');
  t.is((await rawCall(server, token, 'forge', 'tools/call', LIST, { sessionId: stream.sessionId })).status, 200);
  // What the CLI commits, without the event it would send afterwards.
  await server.db.transaction((trx) => revokeConnection(trx, connection, { reason: 'test: no notification' }));
  t.true(await stream.ended, 'the stream closed (the periodic check)');
  assertRevoked(t, await rawCall(server, token, 'forge', 'tools/call', LIST), /revoked/);
});

mcpTest('disabling an account revokes its connections in every organization: calls are refused and open streams close', async (t, server) => {
  const acme = await grant(server, { product: 'forge', tenant: 'acme', user: 'multi@example.com', scopes: ['forge.chat.read'] });
  const globex = await grant(server, { product: 'forge', tenant: 'globex', user: 'multi@example.com', scopes: ['forge.chat.read'] });
  const other = await grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.read'] });
  const streams = [await openStream(server, acme.token, 'forge'), await openStream(server, globex.token, 'forge')];
  t.is((await rawCall(server, acme.token, 'forge', 'tools/call', LIST, { sessionId: streams[0].sessionId })).status, 200);

  const disabled = await cli(server, ['user', 'disable', '--email', 'multi@example.com']);
  t.is(disabled.code, 0, disabled.err);
  t.regex(disabled.out, /^disabled multi@example\.com; ended 0 sign-in session\(s\); revoked 2 connection\(s\)/);
  t.deepEqual(await Promise.all(streams.map((s) => s.ended)), [true, true], 'both streams closed');
  assertRevoked(t, await rawCall(server, acme.token, 'forge', 'tools/call', LIST), /revoked/);
  assertRevoked(t, await rawCall(server, globex.token, 'forge', 'tools/call', LIST), /revoked/);
  t.is((await rawCall(server, other.token, 'forge', 'tools/call', LIST)).status, 200, 'another person of the same organization goes on');
  for (const tenant of ['acme', 'globex'] as const) {
    const revocations = await auditOf(server, tenant, { name: 'connection.revoke' });
    t.deepEqual(revocations.map((r) => JSON.parse(r.args_redacted!)), [{ reason: 'account disabled' }], tenant);
  }
  t.deepEqual(await membershipsOf(server.db, server.users['multi@example.com']), [], 'nobody can choose an organization for a disabled account');
});
