/**
 * SIGKILL under write load (checklist R2, R3, J3): `node --import tsx main.ts` serves
 * forge.create_conversation to four concurrent clients and is killed with SIGKILL mid-load. After
 * a restart on the same database: every acknowledged call has its conversation and its audit
 * record, every conversation the load created has an `ok` audit record of the same request
 * (nothing unaudited), no `ok` record lacks its conversation (nothing half-written), the chain
 * verifies, and the restarted server serves.
 */
import { spawn } from 'node:child_process';
import test from 'ava';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { chainRows, verifyChain } from '../../db/audit.js';
import { createMigratedDatabase, databasesUnderTest } from '../helpers/db.js';
import { issueAccessToken } from '../helpers/grants.js';
import { MCP_HEADERS, readRaw, seedDemo } from '../helpers/mcp.js';
import { freePort, startTestServer } from '../helpers/server.js';
import { PROJECT_ROOT as ROOT } from '../../scripts/project_root.js';

async function waitHealthy(url: string, child: ReturnType<typeof spawn>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server did not start');
}

for (const kind of databasesUnderTest()) {
  test(`killed with SIGKILL during writes: every acknowledged effect is audited, nothing is half-written [${kind}]`, async (t) => {
    t.timeout(120_000);
    const database = await createMigratedDatabase(kind);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let child: ReturnType<typeof spawn> | undefined;
    try {
      await seedDemo(database.db);
      const acme = await database.db('tenants').where({ slug: 'acme' }).first('id');
      const admin = await database.db('users').where({ email: 'admin@acme.example' }).first('id');
      const { token } = await issueAccessToken(database.db, {
        tenantId: acme.id, userId: admin.id, product: 'forge', resource: `${url}/mcp/forge`, scopes: ['forge.chat.read', 'forge.chat.write'],
      });
      await database.db.destroy();

      child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
        cwd: ROOT, stdio: 'ignore',
        env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: url, DATABASE_URL: database.url, DEMO: 'off', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000' },
      });
      await waitHealthy(url, child);

      const headers = { ...MCP_HEADERS, authorization: `Bearer ${token}` };
      const acknowledged: string[] = [];
      const sent: string[] = [];
      let killed = false;
      const worker = async (w: number) => {
        const init = await fetch(`${url}/mcp/forge`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'load', version: '1' } } }) });
        const sessionId = init.headers.get('mcp-session-id')!;
        await init.text();
        const session = { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
        await (await fetch(`${url}/mcp/forge`, { method: 'POST', headers: session, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).text();
        for (let i = 0; !killed; i++) {
          const requestId = `crash-${w}-${i}`;
          sent.push(requestId);
          try {
            const response = await fetch(`${url}/mcp/forge`, {
              method: 'POST', headers: { ...session, 'x-request-id': requestId },
              body: JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'forge.create_conversation', arguments: { title: requestId, first_message: `written by ${requestId}` } } }),
            });
            const raw = await readRaw(response, i + 1);
            if (raw.status === 200 && raw.body?.result && !raw.body.result.isError) acknowledged.push(requestId);
          } catch {
            return; // the server died under this request: its outcome is unknown to the client
          }
        }
      };
      const load = Promise.all([0, 1, 2, 3].map(worker));
      while (acknowledged.length < 40) await new Promise((resolve) => setTimeout(resolve, 20));
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      killed = true;
      await load;
      await exited;
      t.log(`${acknowledged.length} acknowledged of ${sent.length} sent before SIGKILL`);

      // Restart on the same database.
      const restarted = await startTestServer(kind, { database });
      try {
        const db = restarted.portico.context.db;
        const rows: Array<{ title: string }> = await db('forge_conversations').where('title', 'like', 'crash-%').select('title');
        const audits: Array<{ request_id: string; outcome: string }> = await db('audit_log').where({ name: 'forge.create_conversation' }).where('request_id', 'like', 'crash-%').select('request_id', 'outcome');
        const created = new Set(rows.map((r) => r.title));
        const auditedOk = new Set(audits.filter((a) => a.outcome === 'ok').map((a) => a.request_id));
        t.is(rows.length, created.size, 'no call ran twice');
        for (const requestId of acknowledged) {
          t.true(created.has(requestId), `${requestId} was acknowledged: its conversation exists`);
          t.true(auditedOk.has(requestId), `${requestId} was acknowledged: its audit record exists`);
        }
        for (const title of created) t.true(auditedOk.has(title), `${title} exists, so it was audited (no unaudited effect)`);
        for (const requestId of auditedOk) t.true(created.has(requestId), `${requestId} was audited ok, so its conversation exists (nothing half-written)`);
        const messages: Array<{ n: number }> = await db('forge_conversations as c').join('forge_messages as m', 'm.conversation_id', 'c.id').where('c.title', 'like', 'crash-%').count({ n: '*' });
        t.is(Number(messages[0].n), created.size, 'every conversation has its first message: no transaction was half applied');
        const verdict = await verifyChain(chainRows(db, acme.id));
        t.true(verdict.ok, JSON.stringify(verdict));
        t.is((await fetch(`${restarted.url}/healthz`)).status, 200);
      } finally {
        await restarted.stop();
      }
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await database.drop().catch(() => undefined);
    }
  });
}
