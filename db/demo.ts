/**
 * The demo dataset, created on an empty database unless DEMO=off (DESIGN.md §2):
 * tenants acme and globex, an admin and a member in each, and one person in both.
 */
import { generatePassword } from '../shared/passwords.js';
import type { Db, DbOrTrx } from './connect.js';
import { addMembership, countUsers, createTenant, createUser, hashNewPassword, type DbTenantRow, type HashedPassword } from './accounts.js';

export interface DemoCredential {
  email: string;
  password: string;
  memberships: string;
}

/** A product adds its sample rows for a tenant through one of these (registered by the composition root). */
export type DemoSeeder = (trx: DbOrTrx, tenant: DbTenantRow, users: Record<string, string>) => Promise<void>;

const PEOPLE: Array<{ email: string; name: string; in: Array<[slug: string, role: 'admin' | 'member']> }> = [
  { email: 'admin@acme.example', name: 'Ada Admin', in: [['acme', 'admin']] },
  { email: 'member@acme.example', name: 'Milo Member', in: [['acme', 'member']] },
  { email: 'admin@globex.example', name: 'Greta Admin', in: [['globex', 'admin']] },
  { email: 'member@globex.example', name: 'Gus Member', in: [['globex', 'member']] },
  { email: 'multi@example.com', name: 'Morgan Multi', in: [['acme', 'member'], ['globex', 'member']] },
];

/**
 * Every account's password (DEMO_PASSWORD), or a new one for each; with `hashed`, that password
 * already hashed, which every account then stores: for a caller that seeds many databases with
 * one password (the tests) and would otherwise pay five scrypt hashes (~250 ms of CPU) each time.
 */
export type DemoOptions = { seeders?: DemoSeeder[] } & ({ password?: string; hashed?: undefined } | { password: string; hashed: HashedPassword });

/**
 * Seeds only a database with no users and no organizations (one an operator has begun to fill
 * with the admin CLI is left alone); returns the credentials to print, or undefined.
 */
export async function seedDemoIfEmpty(db: Db, options: DemoOptions = {}): Promise<DemoCredential[] | undefined> {
  // A restart, the usual case, finds it filled and hashes nothing.
  if (!(await isEmpty(db))) return undefined;
  // The five passwords are hashed at once and before the transaction: one after another, inside
  // it, they held the database's writer (and on PostgreSQL every other starting instance) ~250 ms.
  const people = await Promise.all(PEOPLE.map(async (person) => {
    const password = options.password ?? generatePassword();
    return { ...person, password, hashed: options.hashed ?? (await hashNewPassword(password)) };
  }));
  return db.transaction(async (trx) => {
    if (!(await isEmpty(trx))) return undefined;
    const tenants = {
      acme: await createTenant(trx, { slug: 'acme', name: 'Acme Corporation' }),
      globex: await createTenant(trx, { slug: 'globex', name: 'Globex Industries' }),
    };
    const credentials: DemoCredential[] = [];
    const userIds: Record<string, string> = {};
    for (const person of people) {
      const user = await createUser(trx, { email: person.email, password: person.hashed, displayName: person.name });
      userIds[person.email] = user.id;
      for (const [slug, role] of person.in) await addMembership(trx, { userId: user.id, tenantId: tenants[slug as keyof typeof tenants].id, role });
      credentials.push({ email: person.email, password: person.password, memberships: person.in.map(([s, r]) => `${s} (${r})`).join(', ') });
    }
    for (const seeder of options.seeders ?? []) {
      for (const tenant of Object.values(tenants)) await seeder(trx, tenant, userIds);
    }
    return credentials;
  });
}

async function isEmpty(db: DbOrTrx): Promise<boolean> {
  return (await countUsers(db)) === 0 && !(await db('tenants').first('id'));
}
