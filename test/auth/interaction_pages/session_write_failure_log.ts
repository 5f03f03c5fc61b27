/**
 * A database error on the authorization server's path is logged (with its request id and stack),
 * but never with the values of the statement that failed: the browser's session id (the value of
 * its `_session` cookie) and the session's contents were written into the log line whole, as knex
 * puts a failed statement's bindings into the error message.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { authorizeCode, CookieJar, follow, startAuthorization } from '../../helpers/oauth.js';
import { PASSWORD, startAuthServer } from '../support.js';

for (const kind of databasesUnderTest()) {
  test(`a session that cannot be written is a logged 500 whose log lines hold no cookie value [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    const { db } = server.portico.context;
    try {
      const jar = new CookieJar();
      const first = await authorizeCode(server.url, { resource: server.forge, scopes: ['forge.chat.read'], email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', jar });
      const session = /(?:^|; )_session=([^;]+)/.exec(jar.header(`${server.url}/oauth/authorize`))?.[1];
      t.truthy(session, 'the browser holds a session cookie');
      // The session row can no longer be written (a full disk, a read-only replica …).
      if (kind === 'sqlite') {
        await db.raw("create trigger refuse_sessions before insert on oidc_payloads when new.model = 'Session' begin select raise(abort, 'sessions cannot be written'); end");
      } else {
        await db.raw("create function refuse_sessions() returns trigger language plpgsql as $$ begin if new.model = 'Session' then raise exception 'sessions cannot be written'; end if; return new; end $$");
        await db.raw('create trigger refuse_sessions before insert or update on oidc_payloads for each row execute function refuse_sessions()');
      }
      const auth = await startAuthorization(server.url, { clientId: first.clientId, resource: server.forge, scopes: ['forge.chat.read'], jar });
      const page = await follow(server.url, jar, auth.response);
      t.is(page.response.status, 500);
      const requestId = auth.response.headers.get('x-request-id') ?? page.response.headers.get('x-request-id');
      const errors = server.logs.filter((line) => line.includes('"level":"error"'));
      t.true(errors.some((line) => requestId !== null && line.includes(requestId)), 'the failure is logged with its request id');
      t.true(errors.some((line) => line.includes('sessions cannot be written')), 'with the database error');
      const leaking = server.logs.filter((line) => line.includes(session!));
      t.deepEqual(leaking.map((line) => line.slice(0, 200)), [], 'no log line holds the session cookie value');
    } finally {
      await db.raw('drop trigger if exists refuse_sessions' + (kind === 'postgres' ? ' on oidc_payloads' : '')).catch(() => undefined);
      await server.close();
    }
  });
}
