/**
 * Token endpoint throughput: authorization-code exchanges (each code used once) and refreshes
 * (rotating chains), both through the real OAuth flow of a Portico process.
 */
import { authorizeCode, CookieJar, exchangeCode, registerClient, signIn, startAuthorization } from '../test/helpers/oauth.js';
import { createDatabase, log, PASSWORD, QUICK, startPortico, type Kind } from './common.js';
import { runLoad, SECONDS, type LoadResult } from './tools_call.js';

export interface TokenRow extends LoadResult {
  database: Kind;
  grant_type: 'authorization_code' | 'refresh_token';
  concurrency: number;
}

const CODES = QUICK ? 150 : 400;
const CONCURRENCY = 10;

export async function tokenEndpoint(kinds: Kind[]): Promise<TokenRow[]> {
  const rows: TokenRow[] = [];
  for (const kind of kinds) {
    const database = await createDatabase(kind);
    const server = await startPortico(database);
    try {
      const resource = `${server.url}/mcp/forge`;
      const scopes = ['forge.chat.read'];
      const { client_id: clientId } = await registerClient(server.url, { client_name: 'bench', redirect_uris: ['http://127.0.0.1/callback'] });
      // Four browsers, each signed in once; every further authorization only asks for consent
      // (a self-registered client is asked every time). One browser runs one flow at a time.
      const jars = await Promise.all(Array.from({ length: 4 }, async () => {
        const jar = new CookieJar();
        await signIn(server.url, await startAuthorization(server.url, { clientId, resource, scopes, jar }), 'admin@acme.example', PASSWORD);
        return jar;
      }));
      const authorize = (jar = jars[0]) => authorizeCode(server.url, { email: 'admin@acme.example', password: PASSWORD, tenant: 'acme', resource, scopes, clientId, jar });

      const codes: Array<Awaited<ReturnType<typeof authorize>>> = [];
      await Promise.all(jars.map(async (jar) => {
        while (codes.length < CODES) codes.push(await authorize(jar));
      }));
      const bodies = codes.map((c) => new URLSearchParams({ grant_type: 'authorization_code', code: c.code, client_id: clientId, redirect_uri: c.redirectUri, code_verifier: c.verifier }).toString());
      const exchange = runLoad({ mode: 'token', url: `${server.url}/oauth/token`, concurrency: CONCURRENCY, bodies });
      rows.push({ database: kind, grant_type: 'authorization_code', concurrency: CONCURRENCY, ...exchange });
      log(`token endpoint (${kind}) authorization_code: ${exchange.rps} req/s over ${exchange.requests} codes, p99 ${exchange.p99} ms, errors ${exchange.errors}`);

      const chains: string[] = [];
      for (let i = 0; i < CONCURRENCY; i += 1) {
        const c = await authorize();
        chains.push((await exchangeCode(server.url, { code: c.code, clientId, redirectUri: c.redirectUri, verifier: c.verifier })).refreshToken!);
      }
      const refresh = runLoad({ mode: 'refresh', url: `${server.url}/oauth/token`, concurrency: CONCURRENCY, seconds: SECONDS, clientId, refreshTokens: chains });
      rows.push({ database: kind, grant_type: 'refresh_token', concurrency: CONCURRENCY, ...refresh });
      log(`token endpoint (${kind}) refresh_token: ${refresh.rps} req/s, p99 ${refresh.p99} ms, errors ${refresh.errors}`);
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  return rows;
}
