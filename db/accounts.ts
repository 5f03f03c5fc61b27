/**
 * Tenants, users and memberships. One function per operation; the caller owns the transaction.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../shared/errors.js';
import { hashPassword, verifyPassword } from '../shared/passwords.js';
import { UNSHOWABLE, UNSHOWABLE_RULE } from '../shared/unshowable.js';
import { dialectOf, type DbOrTrx } from './connect.js';
import { translate } from './errors.js';

export type Role = 'admin' | 'member';
const ROLES: readonly Role[] = ['admin', 'member'];

export interface DbTenantRow {
  id: string;
  slug: string;
  name: string;
  created_at: number;
  /** Set while the organization is suspended (`tenant suspend`): its memberships count for nothing. */
  suspended_at: number | null;
}

interface DbUserRow {
  id: string;
  email: string;
  display_name: string | null;
  password_hash: string;
  created_at: number;
  last_login_at: number | null;
  /** Set while the account is disabled (`user disable`): no sign-in, and its memberships count for nothing. */
  disabled_at: number | null;
}

export interface Membership {
  tenant_id: string;
  tenant_slug: string;
  tenant_name: string;
  role: Role;
}

export type User = Omit<DbUserRow, 'password_hash' | 'disabled_at'>;

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{1,60}$/;
/** The width of users.email: no account has a longer e-mail, so a sign-in naming one is refused unread. */
export const MAX_EMAIL_LENGTH = 254;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

function assertSlug(slug: string): void {
  if (!SLUG.test(slug)) {
    throw new AppError('invalid_request', `tenant slug "${slug}" must be 1-63 lowercase letters, digits or dashes`);
  }
}

export function assertRole(role: string): asserts role is Role {
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new AppError('invalid_request', `role must be admin or member, got "${role}"`);
  }
}

export async function createTenant(db: DbOrTrx, input: { slug: string; name: string }): Promise<DbTenantRow> {
  assertSlug(input.slug);
  const name = input.name.trim();
  if (!name || name.length > 200) throw new AppError('invalid_request', 'tenant name must be 1-200 characters');
  // Shown as stored on the consent page, in the console and in prompts, as a client's name is (auth/clients.ts).
  if (UNSHOWABLE.test(name)) throw new AppError('invalid_request', `tenant name ${UNSHOWABLE_RULE}`);
  const row: DbTenantRow = { id: randomUUID(), slug: input.slug, name, created_at: Date.now(), suspended_at: null };
  await translate(() => db('tenants').insert(row), { conflict: `tenant "${input.slug}" already exists` });
  return row;
}

async function findTenantBySlug(db: DbOrTrx, slug: string): Promise<DbTenantRow | undefined> {
  return db<DbTenantRow>('tenants').where({ slug }).first();
}

export async function requireTenantBySlug(db: DbOrTrx, slug: string): Promise<DbTenantRow> {
  const tenant = await findTenantBySlug(db, slug);
  if (!tenant) throw new AppError('not_found', `no tenant "${slug}"`);
  return tenant;
}

export async function listTenants(db: DbOrTrx): Promise<Array<DbTenantRow & { members: number }>> {
  return db('tenants')
    .leftJoin('memberships', 'memberships.tenant_id', 'tenants.id')
    .groupBy('tenants.id', 'tenants.slug', 'tenants.name', 'tenants.created_at', 'tenants.suspended_at')
    .orderBy('tenants.slug')
    .select('tenants.*', db.raw('count(memberships.user_id) as members'))
    .then((rows) => rows.map((row: DbTenantRow & { members: number | string }) => ({ ...row, members: Number(row.members) })));
}

/**
 * Suspends or resumes an organization; returns whether anything changed. The caller revokes the
 * organization's connections on suspension (scripts/admin.ts `tenant suspend`).
 */
export async function setTenantSuspended(db: DbOrTrx, tenantId: string, suspended: boolean): Promise<boolean> {
  const query = db('tenants').where({ id: tenantId });
  const changed = suspended ? await query.whereNull('suspended_at').update({ suspended_at: Date.now() }) : await query.whereNotNull('suspended_at').update({ suspended_at: null });
  return changed > 0;
}

/** A password that passed the rules, hashed: for a caller that hashes before its transaction opens. */
export interface HashedPassword {
  readonly hash: string;
}

/** Checks `password` against the rules and hashes it (scrypt, ~50 ms of a thread-pool thread). */
export async function hashNewPassword(password: string): Promise<HashedPassword> {
  assertPassword(password);
  return { hash: await hashPassword(password) };
}

export async function createUser(db: DbOrTrx, input: { email: string; password: string | HashedPassword; displayName?: string }): Promise<User> {
  const email = normaliseEmail(input.email);
  if (!EMAIL.test(email)) throw new AppError('invalid_request', `"${input.email}" is not an e-mail address`);
  // PostgreSQL refuses more; SQLite would store an account that no sign-in form accepts.
  if (email.length > MAX_EMAIL_LENGTH) throw new AppError('invalid_request', `an e-mail address has at most ${MAX_EMAIL_LENGTH} characters`);
  const { hash } = typeof input.password === 'string' ? await hashNewPassword(input.password) : input.password;
  // The column holds 200 characters (PostgreSQL refuses more; SQLite would store them).
  const displayName = input.displayName?.trim() || null;
  if (displayName && displayName.length > 200) throw new AppError('invalid_request', 'display name must be at most 200 characters');
  if (displayName && UNSHOWABLE.test(displayName)) throw new AppError('invalid_request', `display name ${UNSHOWABLE_RULE}`);
  const row: DbUserRow = {
    id: randomUUID(),
    email,
    display_name: displayName,
    password_hash: hash,
    created_at: Date.now(),
    last_login_at: null,
    disabled_at: null,
  };
  await translate(() => db('users').insert(row), { conflict: `user ${email} already exists` });
  const { password_hash: _omit, disabled_at: _enabled, ...user } = row;
  return user;
}

function assertPassword(password: string): void {
  if (password.length < 8) throw new AppError('invalid_request', 'password must be at least 8 characters');
  if (password.length > 1024) throw new AppError('invalid_request', 'password must be at most 1024 characters');
}

/**
 * Sets a new password and ends every sign-in the person had: console sessions, and the
 * authorization server's browser sessions (oidc-provider `Session` rows), so that whoever knew
 * the old password is asked for the new one on the next authorize. Returns how many sessions ended.
 * Connections are not touched here (scripts/admin.ts `user password --revoke-connections`).
 */
export async function setPassword(db: DbOrTrx, userId: string, password: string): Promise<number> {
  assertPassword(password);
  await db('users').where({ id: userId }).update({ password_hash: await hashPassword(password) });
  return endSignIns(db, userId);
}

/** Ends every sign-in of a person: console sessions and oidc-provider `Session` rows. Returns how many. */
async function endSignIns(db: DbOrTrx, userId: string): Promise<number> {
  const consoleSessions = await db('console_sessions').where({ user_id: userId }).delete();
  const browserSessions = await db('oidc_payloads').where({ model: 'Session', account_id: userId }).delete();
  return consoleSessions + browserSessions;
}

/**
 * Disables or enables an account; returns whether it changed and, when disabling, how many
 * sign-ins ended. The organizations the person belongs to are locked first (lockTenant), as for a
 * membership change, so a consent answered at that moment either sees the account disabled or
 * leaves a connection the caller then revokes. Refuses to disable an organization's last
 * enabled administrator. The caller revokes the person's connections (scripts/admin.ts).
 */
export async function setUserDisabled(db: DbOrTrx, userId: string, disabled: boolean): Promise<{ changed: boolean; endedSignIns: number }> {
  const membershipsNow = (): Promise<Array<{ tenant_id: string; role: Role }>> => db('memberships').where({ user_id: userId }).orderBy('tenant_id').select('tenant_id', 'role');
  // Roles are read again once the organizations are locked: one may have changed while this waited.
  const locked = new Set<string>();
  let memberships = await membershipsNow();
  while (memberships.some((m) => !locked.has(m.tenant_id))) {
    for (const { tenant_id: tenantId } of memberships) {
      if (!locked.has(tenantId)) await lockTenant(db, tenantId, 'update');
      locked.add(tenantId);
    }
    memberships = await membershipsNow();
  }
  const query = db('users').where({ id: userId });
  if (!disabled) return { changed: (await query.whereNotNull('disabled_at').update({ disabled_at: null })) > 0, endedSignIns: 0 };
  // An account already disabled is no acting administrator, so keepAnAdmin lets it through and the update changes nothing.
  for (const { tenant_id: tenantId, role } of memberships) if (role === 'admin') await keepAnAdmin(db, tenantId, userId);
  if (!(await query.whereNull('disabled_at').update({ disabled_at: Date.now() }))) return { changed: false, endedSignIns: 0 };
  return { changed: true, endedSignIns: await endSignIns(db, userId) };
}

/** The columns of a `User`: never the password hash. */
const USER_COLUMNS = ['id', 'email', 'display_name', 'created_at', 'last_login_at'] as const;

export async function findUserByEmail(db: DbOrTrx, email: string): Promise<User | undefined> {
  return db<DbUserRow>('users').where({ email: normaliseEmail(email) }).first(...USER_COLUMNS);
}

export async function findUserById(db: DbOrTrx, id: string): Promise<User | undefined> {
  return db<DbUserRow>('users').where({ id }).first(...USER_COLUMNS);
}

/** E-mail addresses by user id, for the ids given, absent ones skipped (a page of audit records names its people). */
export async function emailsOf(db: DbOrTrx, ids: ReadonlyArray<string | null>): Promise<Map<string, string>> {
  const unique = [...new Set(ids.filter((id): id is string => id !== null))];
  if (!unique.length) return new Map();
  const rows: Array<{ id: string; email: string }> = await db('users').whereIn('id', unique).select('id', 'email');
  return new Map(rows.map((row) => [row.id, row.email]));
}

/** The account, unless it is disabled: what the authorization server may issue anything for. */
export async function findEnabledUserById(db: DbOrTrx, id: string): Promise<User | undefined> {
  return db<DbUserRow>('users').where({ id }).whereNull('disabled_at').first(...USER_COLUMNS);
}

/** Checks a password in constant work whether or not the user exists. */
export async function authenticate(db: DbOrTrx, email: string, password: string): Promise<User | undefined> {
  // No account has U+0000 in its e-mail, and PostgreSQL would refuse to compare with one.
  const row = email.includes('\u0000') ? undefined : await db<DbUserRow>('users').where({ email: normaliseEmail(email) }).first();
  const ok = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
  // A disabled account is refused as a wrong password is: the page tells nobody which accounts exist.
  if (!row || !ok || row.disabled_at != null) return undefined;
  const now = Date.now();
  await db('users').where({ id: row.id }).update({ last_login_at: now });
  const { password_hash: _omit, disabled_at: _enabled, ...user } = row;
  return { ...user, last_login_at: now };
}

// A real scrypt hash of a random string: failing logins for unknown e-mails cost the same as wrong passwords.
const DUMMY_HASH = 'scrypt$16384$8$1$wqG_Yi-OfQyZnxSt71DFnw$JtXGr0otvFBLkh6kWjXuCUdXkEYn-YRlQp15lHQDuhI';

export async function addMembership(db: DbOrTrx, input: { userId: string; tenantId: string; role: string }): Promise<void> {
  assertRole(input.role);
  await translate(
    () => db('memberships').insert({ user_id: input.userId, tenant_id: input.tenantId, role: input.role, created_at: Date.now() }),
    { conflict: 'the user is already a member of this tenant', missing: 'no such user or tenant' },
  );
}

/**
 * Changes a member's role; returns the role before. The caller revokes what the new role may no
 * longer hold (scripts/admin.ts `member role`). Refuses to demote an organization's last administrator.
 */
export async function setMembershipRole(db: DbOrTrx, input: { userId: string; tenantId: string; role: string }): Promise<Role> {
  assertRole(input.role);
  await lockTenant(db, input.tenantId, 'update');
  const before = await requireMembership(db, input.userId, input.tenantId);
  if (before === 'admin' && input.role !== 'admin') await keepAnAdmin(db, input.tenantId, input.userId);
  await db('memberships').where({ user_id: input.userId, tenant_id: input.tenantId }).update({ role: input.role });
  return before;
}

/**
 * Ends a membership; returns the role it had. The caller revokes the person's connections in the
 * organization. Refuses to remove an organization's last administrator.
 */
export async function removeMembership(db: DbOrTrx, input: { userId: string; tenantId: string }): Promise<Role> {
  await lockTenant(db, input.tenantId, 'update');
  const before = await requireMembership(db, input.userId, input.tenantId);
  if (before === 'admin') await keepAnAdmin(db, input.tenantId, input.userId);
  await db('memberships').where({ user_id: input.userId, tenant_id: input.tenantId }).delete();
  return before;
}

/**
 * Orders the transactions that change who may act in an organization against those that rely on
 * it, with one lock: the tenant's row. Membership changes and suspension take it exclusively
 * (`update`); a consent takes it `share` before it re-reads the membership and creates its
 * connection. So either the consent sees the change and refuses, or the change, made after it,
 * finds the new connection and revokes it; and two operators demoting the last two
 * administrators take turns, the second seeing the first's change. On SQLite, where writers take
 * turns on the whole database, the lock is a write (a transaction that begins by reading could
 * otherwise not write once another process has: SQLITE_BUSY_SNAPSHOT).
 */
export async function lockTenant(db: DbOrTrx, tenantId: string, mode: 'share' | 'update'): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    const query = db('tenants').where({ id: tenantId }).first('id');
    // NO KEY UPDATE, not UPDATE: it still excludes a consent's SHARE and another change, but not the
    // KEY SHARE every write of the tenant's calls takes through its foreign key to this row. Against
    // FOR UPDATE, a steady stream of writes kept the row key-share locked without a gap, and the
    // change waited until its connection was given up.
    await (mode === 'share' ? query.forShare() : query.forNoKeyUpdate());
  } else {
    await db('tenants').where({ id: tenantId }).update({ name: db.ref('name') });
  }
}

async function requireMembership(db: DbOrTrx, userId: string, tenantId: string): Promise<Role> {
  const row = await db('memberships').where({ user_id: userId, tenant_id: tenantId }).first('role');
  if (!row) throw new AppError('not_found', 'the user is not a member of this tenant');
  return row.role;
}

/**
 * Throws `conflict` if `leaving` is the tenant's only administrator who can act. Only enabled
 * administrators count: a disabled one is no administrator to fall back on, and one leaving changes nothing.
 */
async function keepAnAdmin(db: DbOrTrx, tenantId: string, leaving: string): Promise<void> {
  const admins: Array<{ user_id: string }> = await db('memberships').join('users', 'users.id', 'memberships.user_id')
    .where({ 'memberships.tenant_id': tenantId, 'memberships.role': 'admin' }).whereNull('users.disabled_at').select('memberships.user_id');
  if (admins.some((admin) => admin.user_id === leaving) && admins.length <= 1) throw new AppError('conflict', 'this is the last administrator of the tenant: make another member an administrator first');
}

/** The organizations a person may act in: their memberships, less suspended organizations; none while the account is disabled. */
export async function membershipsOf(db: DbOrTrx, userId: string): Promise<Membership[]> {
  return db('memberships')
    .join('tenants', 'tenants.id', 'memberships.tenant_id')
    .join('users', 'users.id', 'memberships.user_id')
    .where('memberships.user_id', userId)
    .whereNull('tenants.suspended_at')
    .whereNull('users.disabled_at')
    .orderBy('tenants.slug')
    .select('tenants.id as tenant_id', 'tenants.slug as tenant_slug', 'tenants.name as tenant_name', 'memberships.role');
}

/** A person's role in an organization, or undefined if they are not a member, it is suspended or their account is disabled. */
export async function membershipIn(db: DbOrTrx, userId: string, tenantId: string): Promise<Role | undefined> {
  const row = await db('memberships').join('tenants', 'tenants.id', 'memberships.tenant_id').join('users', 'users.id', 'memberships.user_id')
    .where({ 'memberships.user_id': userId, 'memberships.tenant_id': tenantId }).whereNull('tenants.suspended_at').whereNull('users.disabled_at')
    .first('memberships.role');
  return row?.role;
}

export async function listUsers(db: DbOrTrx, tenantId?: string): Promise<Array<User & { memberships: string; disabled_at: number | null }>> {
  const query = db('users')
    .leftJoin('memberships', 'memberships.user_id', 'users.id')
    .leftJoin('tenants', 'tenants.id', 'memberships.tenant_id')
    .orderBy(['users.email', 'tenants.slug'])
    .select('users.id', 'users.email', 'users.display_name', 'users.created_at', 'users.last_login_at', 'users.disabled_at', 'tenants.slug', 'memberships.role');
  if (tenantId) query.where('memberships.tenant_id', tenantId);
  const rows: Array<User & { disabled_at: number | null; slug: string | null; role: Role | null }> = await query;
  const byUser = new Map<string, User & { disabled_at: number | null; memberships: string[] }>();
  for (const { slug, role, ...user } of rows) {
    const entry = byUser.get(user.id) ?? { ...user, memberships: [] };
    if (slug) entry.memberships.push(`${slug}:${role}`);
    byUser.set(user.id, entry);
  }
  return [...byUser.values()].map((u) => ({ ...u, memberships: u.memberships.join(',') }));
}

export async function countUsers(db: DbOrTrx): Promise<number> {
  const row = await db('users').count<{ n: number | string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}
