/**
 * Two tool calls of one chat assistant in parallel (models call tools in parallel) just after its
 * access token expired: both get 401 and the SDK refreshes twice with the same refresh token.
 * The slower refresh repeats the first inside the grace window, so it gets the first one's answer
 * (auth/refresh_repeat.ts, docs/auth.md "parallel refreshes"): both calls are answered, the person
 * is not asked again, and the client keeps one connection. Before, the slower refresh was refused
 * invalid_grant; the SDK then forgot its tokens (invalidateCredentials, as real clients implement
 * it) and sent the person to sign in and consent again.
 *
 * Which of the two refusals reaches the client first, and when, is the network's choice; the
 * transport's fetch holds them so that each test meets one order every time.
 */
import test, { type ExecutionContext } from 'ava';
import { databasesUnderTest, type DbKind } from '../../helpers/db.js';
import { startMcpServer } from '../../helpers/mcp.js';
import { assistant, expireAccessToken, signedIn, sleep } from '../sdk_journeys_support.js';

/** What the client sent, seen from its fetch. */
interface Seen {
  /** The refresh token of each refresh request, in order. */
  refreshes: string[];
  /** The access token the client connected with (the one that expires). */
  expired: string;
}

/** A fetch for the transport, made once the client's first tokens are known. */
type Holding = (seen: Seen) => typeof fetch;

function refreshTokenOf(init?: RequestInit): string | undefined {
  const body = init?.body;
  return body instanceof URLSearchParams && body.get('grant_type') === 'refresh_token' ? (body.get('refresh_token') ?? undefined) : undefined;
}

function isMcpPost(init?: RequestInit): boolean {
  return init?.method === 'POST' && new Headers(init.headers).get('content-type') === 'application/json';
}

/**
 * Sends two tool calls at once just after the access token expired, through a fetch that may hold
 * some answers, and checks what a person expects: both answered, no new sign-in, one connection.
 */
async function twoCallsAtExpiry(t: ExecutionContext, kind: DbKind, holding: Holding): Promise<Seen> {
  const server = await startMcpServer(kind);
  t.teardown(() => server.close());
  const provider = assistant(server);
  let expiresAt = 0;
  const seen: Seen = { refreshes: [], expired: '' };
  const watched = holding(seen);
  const { client } = await signedIn(server, provider, 'forge', {
    beforeConnect: async () => {
      seen.expired = provider.tokens()!.access_token;
      expiresAt = await expireAccessToken(server, seen.expired, 1500);
    },
    // The server closes the GET stream when the token expires (checklist R5). Reopened, it would
    // meet a 401 and refresh a third time whenever that comes before the calls' refresh is saved:
    // the machine's timing, not the calls. This client leaves the stream closed.
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 1.5 },
    fetch: async (input, init) => {
      const refreshToken = refreshTokenOf(init);
      if (refreshToken) seen.refreshes.push(refreshToken);
      return watched(input, init);
    },
  });
  try {
    await sleep(Math.max(0, expiresAt - Date.now()) + 50); // until the token has expired by the server's clock
    const results = await Promise.allSettled([
      client.callTool({ name: 'forge.list_conversations', arguments: {} }),
      client.callTool({ name: 'forge.create_conversation', arguments: { title: 'In parallel' } }),
    ]);
    t.deepEqual(results.map((r) => (r.status === 'fulfilled' ? 'answered' : String(r.reason))), ['answered', 'answered']);
    t.is(provider.requests.length, 1, 'the person was sent to sign in and consent again');
    t.deepEqual(provider.invalidated, [], 'the client was told its refresh token was invalid');
    t.is((await server.db('connections')).length, 1, 'a second connection was made for the same client and person');
  } finally {
    await client.close();
  }
  return seen;
}

for (const kind of databasesUnderTest()) {
  test(`two parallel calls at token expiry are both answered without asking the person again [${kind}]`, async (t) => {
    // Each refusal waits for the other, so both calls refresh from the same refresh token.
    const seen = await twoCallsAtExpiry(t, kind, () => {
      let refused = 0;
      let bothRefused!: () => void;
      const both = new Promise<void>((resolve) => (bothRefused = resolve));
      return async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 401 && isMcpPost(init)) {
          if (++refused === 2) bothRefused();
          await both;
        }
        return response;
      };
    });
    t.is(seen.refreshes.length, 2, 'the two calls did not both refresh');
    t.is(new Set(seen.refreshes).size, 1, 'the two refreshes sent different refresh tokens');
  });
}

// The other order: one call's 401 reaches the SDK after the other call has refreshed and while its
// retry is on its way. SDK 1.32.2's transport keeps one "already authorized" flag for all its
// requests (`_hasCompletedAuthFlow`, a guard against a 401 loop), set by the first call's refresh
// until a request succeeds, so the late call is given up with "Server returned 401 after
// successful authentication" instead of being sent again with the new token. The server has
// nothing to answer differently: that call carried the expired token. Kept as a known failure
// (one clean-clone CI run met this order by chance): when the SDK is fixed this test passes, ava
// reports that, and `.failing` must be removed.
for (const kind of databasesUnderTest()) {
  test.failing(`a call refused after the other call refreshed is sent again with the new token (SDK 1.32.2 gives it up) [${kind}]`, async (t) => {
    await twoCallsAtExpiry(t, kind, (seen) => {
      let refused = 0;
      let retrying!: () => void;
      const retried = new Promise<void>((resolve) => (retrying = resolve));
      return async (input, init) => {
        const retry = isMcpPost(init) && new Headers(init?.headers).get('authorization') !== `Bearer ${seen.expired}`;
        if (retry) retrying(); // a call sent again with the refreshed token
        const response = await fetch(input, init);
        if (response.status === 401 && isMcpPost(init) && ++refused === 2) await retried;
        if (retry) await sleep(300); // the retry's answer arrives after the late refusal is read
        return response;
      };
    });
  });
}
