/**
 * SQL statements per request, counted with knex's 'query' event on an in-process Portico: a
 * tools/call alone and under concurrency (group commit shares one transaction between calls),
 * an authorization-code exchange and a refresh (grant-store statements are those on
 * oidc_payloads, connections and the audit tables).
 */
import type { Knex } from 'knex';
import { startPortico as startInProcess } from '../app.js';
import { readerOf } from '../db/connect.js';
import { defaultMounts, defaultSeeders } from '../mounts.js';
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/log.js';
import { authorizeCode, CookieJar, exchangeCode, refresh, registerClient, signIn, startAuthorization } from '../test/helpers/oauth.js';
import { callTool, createDatabase, freePort, openSession, PASSWORD, type Kind } from './common.js';

export interface StatementRow {
  database: Kind;
  request: string;
  statements: number;
  /** Statements that touch the grant store (oidc_payloads, connections). */
  grant_store: number;
}

const GRANT_STORE = /\b(oidc_payloads|connections)\b/;

export async function statementCounts(kinds: Kind[]): Promise<StatementRow[]> {
  const rows: StatementRow[] = [];
  for (const kind of kinds) {
    const database = await createDatabase(kind);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', PUBLIC_AUTH_URL: url, DATABASE_URL: database.url, DEMO: 'on', DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000' });
    const portico = await startInProcess(config, { log: createLogger('silent'), mounts: defaultMounts(), seeders: defaultSeeders() });
    const db: Knex = portico.context.db;
    let all = 0;
    let grantStore = 0;
    const count = (query: { sql: string }) => {
      all += 1;
      if (GRANT_STORE.test(query.sql)) grantStore += 1;
    };
    // On SQLite, reads outside a transaction run on separate read-only connections (db/connect.ts).
    for (const pool of new Set([db, readerOf(db)])) pool.on('query', count);
    const measure = async (request: string, count: number, work: () => Promise<unknown>) => {
      all = 0;
      grantStore = 0;
      await work();
      rows.push({ database: kind, request, statements: Number((all / count).toFixed(2)), grant_store: Number((grantStore / count).toFixed(2)) });
    };
    try {
      const resource = `${url}/mcp/forge`;
      const scopes = ['forge.chat.read'];
      const { client_id: clientId } = await registerClient(url, { client_name: 'bench', redirect_uris: ['http://127.0.0.1/callback'] });
      const jar = new CookieJar();
      await signIn(url, await startAuthorization(url, { clientId, resource, scopes, jar }), 'admin@acme.example', PASSWORD);
      const authorize = () => authorizeCode(url, { email: 'admin@acme.example', password: PASSWORD, tenant: 'acme', resource, scopes, clientId, jar });

      const codes: Array<Awaited<ReturnType<typeof authorize>>> = [];
      for (let i = 0; i < 10; i += 1) codes.push(await authorize());
      const tokens: Array<Awaited<ReturnType<typeof exchangeCode>>> = [];
      await measure('authorization_code exchange', codes.length, async () => {
        for (const c of codes) tokens.push(await exchangeCode(url, { code: c.code, clientId, redirectUri: c.redirectUri, verifier: c.verifier }));
      });
      let refreshToken = tokens[0].refreshToken!;
      await measure('refresh_token', 10, async () => {
        for (let i = 0; i < 10; i += 1) refreshToken = (await refresh(url, { refreshToken, clientId })).refreshToken!;
      });

      const token = tokens[1].accessToken;
      const sessionId = await openSession(resource, token);
      await callTool(resource, token, sessionId, 1); // first use: the principal is looked up once
      await measure('tools/call, one at a time', 50, async () => {
        for (let i = 0; i < 50; i += 1) await callTool(resource, token, sessionId, 100 + i);
      });
      await measure('tools/call, 50 concurrent', 500, async () => {
        let next = 1000;
        await Promise.all(Array.from({ length: 50 }, async () => {
          for (let i = 0; i < 10; i += 1) await callTool(resource, token, sessionId, next++);
        }));
      });
    } finally {
      await portico.close();
      await database.drop();
    }
  }
  return rows;
}
