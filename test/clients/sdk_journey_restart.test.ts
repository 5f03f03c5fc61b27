/**
 * A chat assistant across a server restart and across sessions: a destructive tool's
 * confirmation_required, confirmed in the same session, and confirmed in a new session after the
 * server restarted (the old session answers 404; the client starts a new one with the same
 * tokens, which survive the restart, and the person is not asked to sign in again).
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { databasesUnderTest } from '../helpers/db.js';
import { auditOf, startMcpServer } from '../helpers/mcp.js';
import test from 'ava';
import { assistant, connectAgain, signedIn } from './sdk_journeys_support.js';

/** fetch's failure when the kept-alive socket it wrote to had been closed by the other side. */
function socketClosedUnderneath(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return error instanceof TypeError && ['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'].includes(cause?.code ?? '');
}

function describe(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause ? `${String(error)} (cause: ${String(cause)}, code ${(cause as { code?: string }).code})` : String(error);
}

function codeOf(result: Record<string, unknown>): string | undefined {
  return (result.structuredContent as { code?: string } | undefined)?.code;
}

for (const kind of databasesUnderTest()) {
  // Serial: the restart reuses the port, which a concurrent test could take meanwhile.
  test.serial(`confirmation in the same session, then a restart: 404, a new session with the same tokens, and the pending confirmation still works [${kind}]`, async (t) => {
    let server = await startMcpServer(kind);
    try {
      const provider = assistant(server);
      const first = await signedIn(server, provider, 'forge');
      const make = async (title: string) => ((await first.client.callTool({ name: 'forge.create_conversation', arguments: { title } })).structuredContent as { id: string }).id;
      const kept = await make('Confirmed in the same session');
      const asked = await first.client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: kept } });
      t.is(codeOf(asked), 'confirmation_required');
      const deleted = await first.client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: kept, confirmed: true } });
      t.falsy(deleted.isError, JSON.stringify(deleted));

      const later = await make('Confirmed after a restart');
      t.is(codeOf(await first.client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: later } })), 'confirmation_required');

      const { port } = new URL(server.url);
      await server.stop();
      server = await startMcpServer(kind, { database: server.database, env: { PORT: port, PUBLIC_AUTH_URL: `http://127.0.0.1:${port}` } });
      const listAgain = () => first.client.callTool({ name: 'forge.list_conversations', arguments: {} }).catch((error: unknown) => error);
      let gone = await listAgain();
      // A socket the client kept alive from before the restart may carry this request and meet the
      // old server's close (undici: "other side closed"); that request never reached the new
      // server, so it is sent again. The client may have kept several such sockets (its calls and
      // its GET stream each had one; CI on ee28d63 met two in a row), and each one met is
      // discarded: a few attempts are enough. Any other failure stands.
      for (let attempt = 1; attempt < 5 && socketClosedUnderneath(gone); attempt += 1) gone = await listAgain();
      t.true(gone instanceof StreamableHTTPError && gone.code === 404, describe(gone));
      await first.client.close();

      const second = await connectAgain(server, provider, 'forge');
      try {
        const confirmed = await second.client.callTool({ name: 'forge.delete_conversation', arguments: { conversation_id: later, confirmed: true } });
        t.falsy(confirmed.isError, JSON.stringify(confirmed));
        t.is(codeOf(confirmed), undefined);
        t.is(provider.requests.length, 1, 'the person was not asked again');
        const outcomes = (await auditOf(server, 'acme', { name: 'forge.delete_conversation' })).map((r) => r.outcome);
        t.deepEqual(outcomes, ['confirmation_required', 'ok', 'confirmation_required', 'ok']);
      } finally {
        await second.client.close();
      }
    } finally {
      await server.close();
      // The server after the restart was given the first one's database, and keeps what it is given.
      await server.database.drop();
    }
  });
}
