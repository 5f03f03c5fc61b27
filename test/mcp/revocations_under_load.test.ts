/**
 * The operator's revocations of several connections at once (`tenant suspend`, `member remove`)
 * meet calls those connections are making at that moment. Each such command revokes connection
 * after connection in one transaction, appending an audit record for each; a writing call locks
 * its connection's row and then its organization's audit chain. Neither may fail for the other:
 * the command revokes everything it names, within seconds, and a call either completes before
 * the revocation or is refused (or cancelled) by it, never `internal`.
 */
import { runAdmin } from '../../scripts/admin.js';
import { auditOf, grant, mcpTest, openSession, rawCall, type McpTestServer } from '../helpers/mcp.js';

/** Each round meets the change with fresh connections. */
const ROUNDS = 2;
/** The writers call back to back: the per-connection rate limit is not what is tested here. */
const UNLIMITED = { env: { RATE_LIMIT_PER_MINUTE: '1000000' } };
/** A call ran, was refused as revoked, or was cancelled as the revocation closed its session (docs/security.md R4). */
const ENDED_WELL = new Set(['ok', 'connection_revoked', 'timeout']);
const CREATE = { name: 'forge.create_conversation', arguments: { title: 'written during an operator change' } };

async function cli(server: McpTestServer, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { DATABASE_URL: server.database.url });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/**
 * The command, given `ms` to finish while the calls go on. One that has not finished by then is
 * reported as such (and finishes once the calls stop, before the test goes on).
 */
async function commandWithin(ms: number, command: Promise<{ code: number; out: string; err: string }>, late: Array<Promise<unknown>>) {
  late.push(command);
  const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref());
  return (await Promise.race([command, timer])) ?? { code: -1, out: '', err: `did not finish within ${ms} ms while the calls went on` };
}

/**
 * Writes on every connection, back to back, while `during` runs and until each connection has made
 * a call that began after it; returns each call's outcome code.
 */
async function underLoad(server: McpTestServer, tokens: string[], during: () => Promise<void>): Promise<string[]> {
  const sessions = await Promise.all(tokens.map((token) => openSession(server, token, 'forge')));
  const outcomes: string[] = [];
  let duringEnded = false;
  const writers = tokens.map(async (token, i) => {
    for (let after = false; !after;) {
      after = duringEnded;
      const response = await rawCall(server, token, 'forge', 'tools/call', CREATE, { sessionId: sessions[i] });
      const body = response.body;
      outcomes.push(body?.result ? (body.result.isError ? String(body.result.structuredContent?.code) : 'ok') : (body?.error?.data?.code ?? `no answer (${response.status})`));
    }
  });
  // Every writer is under way before the change.
  while (outcomes.filter((o) => o === 'ok').length < tokens.length * 2) await new Promise((resolve) => setTimeout(resolve, 10));
  try {
    await during();
  } finally {
    duringEnded = true;
    await Promise.all(writers);
  }
  return outcomes;
}

mcpTest('tenant suspend succeeds while the organization’s connections are writing, and no call fails as internal', async (t, server) => {
  for (let round = 1; round <= ROUNDS; round += 1) {
    const grants = await Promise.all(Array.from({ length: 6 }, () => grant(server, { product: 'forge', tenant: 'acme', scopes: ['forge.chat.write'] })));
    let suspended = { code: -1, out: '', err: '' };
    const late: Array<Promise<unknown>> = [];
    const outcomes = await underLoad(server, grants.map((g) => g.token), async () => {
      suspended = await commandWithin(15_000, cli(server, ['tenant', 'suspend', 'acme']), late);
    });
    await Promise.all(late);
    t.is(suspended.code, 0, `round ${round}: ${suspended.err}`);
    t.regex(suspended.out, /^suspended acme; revoked \d+ connection\(s\)/);
    t.deepEqual(outcomes.filter((o) => !ENDED_WELL.has(o)), [], `round ${round}: every call either ran or was refused as revoked`);
    const live = await server.db('connections').whereIn('id', grants.map((g) => g.connection.id)).whereNull('revoked_at').pluck('id');
    t.deepEqual(live, [], `round ${round}: every connection was revoked`);
    t.is((await cli(server, ['tenant', 'resume', 'acme'])).code, 0);
  }
  t.is((await auditOf(server, 'acme', { name: 'tenant.suspend' })).length, ROUNDS);
  t.is((await cli(server, ['audit', 'verify', '--tenant', 'acme'])).code, 0);
}, UNLIMITED);

mcpTest('member remove succeeds while the person’s connections are writing, and no call fails as internal', async (t, server) => {
  for (let round = 1; round <= ROUNDS; round += 1) {
    const grants = await Promise.all(Array.from({ length: 6 }, () => grant(server, { product: 'forge', tenant: 'acme', user: 'member@acme.example', scopes: ['forge.chat.write'] })));
    let removed = { code: -1, out: '', err: '' };
    const late: Array<Promise<unknown>> = [];
    const outcomes = await underLoad(server, grants.map((g) => g.token), async () => {
      removed = await commandWithin(15_000, cli(server, ['member', 'remove', '--tenant', 'acme', '--email', 'member@acme.example']), late);
    });
    await Promise.all(late);
    t.is(removed.code, 0, `round ${round}: ${removed.err}`);
    t.regex(removed.out, /^removed member@acme\.example from acme; revoked 6 connection\(s\)/);
    t.deepEqual(outcomes.filter((o) => !ENDED_WELL.has(o)), [], `round ${round}: every call either ran or was refused as revoked`);
    t.is((await cli(server, ['member', 'add', '--tenant', 'acme', '--email', 'member@acme.example', '--role', 'member'])).code, 0);
  }
  t.is((await cli(server, ['audit', 'verify', '--tenant', 'acme'])).code, 0);
}, UNLIMITED);
