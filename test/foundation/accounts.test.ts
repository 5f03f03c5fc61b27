import { testOnEachDatabase } from '../helpers/db.js';
import {
  addMembership, authenticate, createTenant, createUser, listTenants, listUsers, membershipIn, membershipsOf,
} from '../../db/accounts.js';
import { loadOrCreateSecret } from '../../db/secrets.js';
import { isAppError } from '../../shared/errors.js';

testOnEachDatabase('tenants, users and memberships round-trip', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  const globex = await createTenant(db, { slug: 'globex', name: 'Globex' });
  const user = await createUser(db, { email: ' Multi@Example.com ', password: 'correct horse' });
  t.is(user.email, 'multi@example.com');
  t.false('password_hash' in user);
  await addMembership(db, { userId: user.id, tenantId: acme.id, role: 'admin' });
  await addMembership(db, { userId: user.id, tenantId: globex.id, role: 'member' });
  t.deepEqual((await membershipsOf(db, user.id)).map((m) => [m.tenant_slug, m.role]), [['acme', 'admin'], ['globex', 'member']]);
  t.is(await membershipIn(db, user.id, globex.id), 'member');
  t.deepEqual((await listTenants(db)).map((x) => [x.slug, x.members]), [['acme', 1], ['globex', 1]]);
  t.is((await listUsers(db))[0].memberships, 'acme:admin,globex:member');
  t.is((await listUsers(db, acme.id))[0].memberships, 'acme:admin');
});

testOnEachDatabase('passwords are scrypt hashes and only the right one authenticates', async (t, { db }) => {
  await createUser(db, { email: 'a@example.com', password: 'right password' });
  const row = await db('users').where({ email: 'a@example.com' }).first();
  t.regex(row.password_hash, /^scrypt\$16384\$8\$1\$/);
  t.false(row.password_hash.includes('right password'));
  t.truthy(await authenticate(db, 'A@example.com', 'right password'));
  t.is(await authenticate(db, 'a@example.com', 'wrong password'), undefined);
  t.is(await authenticate(db, 'nobody@example.com', 'right password'), undefined);
});

testOnEachDatabase('duplicates, bad roles and unknown references are domain errors', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  const user = await createUser(db, { email: 'a@example.com', password: 'password1' });
  const duplicateTenant = await t.throwsAsync(createTenant(db, { slug: 'acme', name: 'Again' }));
  t.true(isAppError(duplicateTenant) && duplicateTenant.code === 'conflict');
  const duplicateUser = await t.throwsAsync(createUser(db, { email: 'A@example.com', password: 'password2' }));
  t.true(isAppError(duplicateUser) && duplicateUser.code === 'conflict');
  const badRole = await t.throwsAsync(addMembership(db, { userId: user.id, tenantId: acme.id, role: 'owner' }));
  t.true(isAppError(badRole) && badRole.code === 'invalid_request');
  const missing = await t.throwsAsync(addMembership(db, { userId: user.id, tenantId: 'no-such-tenant', role: 'member' }));
  t.true(isAppError(missing) && missing.code === 'not_found');
  const badSlug = await t.throwsAsync(createTenant(db, { slug: 'Not Valid', name: 'x' }));
  t.true(isAppError(badSlug) && badSlug.code === 'invalid_request');
  t.is(Number((await db('memberships').count({ n: '*' }).first())?.n), 0);
});

testOnEachDatabase('a secret is generated once and then reused', async (t, { db }) => {
  let generated = 0;
  const make = () => `secret-${(generated += 1)}`;
  const [a, b] = await Promise.all([loadOrCreateSecret(db, 'k', make), loadOrCreateSecret(db, 'k', make)]);
  t.is(a, b);
  t.is(await loadOrCreateSecret(db, 'k', make), a);
});
