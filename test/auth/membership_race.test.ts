/**
 * A consent answered while an operator changes who may act in the organization. The consent page
 * reads the person's memberships, saves the grant, then creates the connection in a transaction;
 * an operator's `member remove`, `tenant suspend`, `user disable` or (for an administrators'
 * product) `member role … --role member` committing in that gap must not leave a live connection
 * behind (db/accounts.ts lockTenant): the consent re-reads under the tenant's lock.
 */
import test, { type ExecutionContext } from 'ava';
import { runAdmin } from '../../scripts/admin.js';
import { databasesUnderTest } from '../helpers/db.js';
import { authorizeCode } from '../helpers/oauth.js';
import { PASSWORD, startAuthServer, type AuthServer } from './support.js';

/**
 * Runs `argv` through the admin CLI (its own connection, as another process would) at the moment
 * the consent opens its transaction: the first transaction the server starts once a grant exists.
 */
function operatorDuringConsent(t: ExecutionContext, server: AuthServer, argv: string[]): () => void {
  const { db } = server.portico.context;
  const context = (db as unknown as { context: { transaction: (...args: unknown[]) => unknown } }).context;
  const original = context.transaction;
  let pending = true;
  context.transaction = async function (...args: unknown[]) {
    if (pending && (await db('oidc_payloads').where({ model: 'Grant' }).first())) {
      pending = false;
      const out: string[] = [];
      const code = await runAdmin(argv, { out: (l) => out.push(l), err: (l) => out.push(l) }, { DATABASE_URL: server.database.url });
      t.is(code, 0, out.join('\n'));
    }
    return original.apply(context, args);
  };
  return () => {
    context.transaction = original;
    t.false(pending, 'the operator ran inside the consent');
  };
}

const cases: Array<[string, string[]]> = [
  ['member remove', ['member', 'remove', '--tenant', 'acme', '--email', 'multi@example.com']],
  ['tenant suspend', ['tenant', 'suspend', 'acme']],
  ['user disable', ['user', 'disable', '--email', 'multi@example.com']],
];

for (const kind of databasesUnderTest()) {
  for (const [name, argv] of cases) {
    test(`a consent racing ${name} is refused and leaves no connection and no grant [${kind}]`, async (t) => {
      const server = await startAuthServer(kind);
      try {
        const { db } = server.portico.context;
        const restore = operatorDuringConsent(t, server, argv);
        const refused = await authorizeCode(server.url, { email: 'multi@example.com', password: PASSWORD, tenant: 'acme', resource: server.forge, scopes: ['forge.chat.read'] })
          .then(() => 'a code was issued', (error: Error) => error.message);
        restore();
        t.regex(refused, /^authorization did not return a code: 403 .*membership of that organization changed/s);
        t.deepEqual(await db('connections').where({ user_id: server.users.multi.id }).select('id'), [], 'no connection');
        t.is(await db('oidc_payloads').where({ model: 'Grant' }).first(), undefined, 'the grant was destroyed');
      } finally {
        await server.close();
      }
    });
  }

  test(`a consent to an administrators' product racing the person's demotion is refused and leaves no connection and no grant [${kind}]`, async (t) => {
    const server = await startAuthServer(kind);
    try {
      const { db } = server.portico.context;
      // alice is an administrator of acme when the page is answered, and a member when the consent
      // commits (multi is made an administrator too: the last one cannot be demoted).
      await db('memberships').where({ user_id: server.users.multi.id, tenant_id: server.tenants.acme.id }).update({ role: 'admin' });
      const restore = operatorDuringConsent(t, server, ['member', 'role', '--tenant', 'acme', '--email', 'alice@acme.example', '--role', 'member']);
      const refused = await authorizeCode(server.url, { email: 'alice@acme.example', password: PASSWORD, tenant: 'acme', resource: server.aegis, scopes: ['aegis.scans.read'] })
        .then(() => 'a code was issued', (error: Error) => error.message);
      restore();
      t.regex(refused, /^authorization did not return a code: 403 .*membership of that organization changed/s);
      t.deepEqual(await db('connections').where({ user_id: server.users.alice.id, product: 'aegis' }).select('id'), [], 'no connection');
      t.is(await db('oidc_payloads').where({ model: 'Grant' }).first(), undefined, 'the grant was destroyed');
    } finally {
      await server.close();
    }
  });
}
