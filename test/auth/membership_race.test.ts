/**
 * A consent answered while an operator changes who may act in the organization. The consent page
 * reads the person's memberships, saves the grant, then creates the connection in a transaction;
 * an operator's `member remove` or `tenant suspend` committing in that gap must not leave a live
 * connection behind (db/accounts.ts lockTenant): the consent re-reads under the tenant's lock.
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
}
