/**
 * Operator CLI: `npm run admin -- <command>`. Errors print one clear line and exit non-zero (EXIT);
 * every command runs in one transaction, so a failure writes nothing. Options are parsed strictly:
 * an unknown option, an unexpected argument or an option given twice (shared/cli_args.ts) is a
 * usage error, never ignored.
 */
import { onePositional, parseArgs, theOne } from '../shared/cli_args.js';
import { ConfigError, loadConfig, requireKeptDatabase, type DatabaseConfig } from '../shared/config.js';
import { AppError, isAppError, UsageError } from '../shared/errors.js';
import { connectDatabase, isMissingSqlite, type Db, type DbOrTrx } from '../db/connect.js';
import { exclusively, migrateLatest } from '../db/migrate.js';
import {
  addMembership, assertRole, createTenant, createUser, findUserByEmail, listTenants, listUsers, normaliseEmail, removeMembership, requireTenantBySlug,
  setMembershipRole, setPassword, setTenantSuspended, setUserDisabled, type DbTenantRow, type Role, type User,
} from '../db/accounts.js';
import { liveConnections, lockConnections, revocationEvents, revokeConnections, revokedNote, type DbConnectionRow } from '../db/grant_store.js';
import type { PorticoEvent } from '../shared/events.js';
import { appendAudit, chainPages, formatCheckpoint, parseCheckpoint, verifyChain, verifyStoredChain, type AuditVerification, type Head } from '../db/audit.js';
import { exportChunks, readExport } from '../db/audit_export.js';
import { setSurfaceStatus, surfaceOverrides } from '../db/surfaces.js';
import { channelFor } from '../db/notify.js';
import { appendEvents, eventsFileOf } from '../db/sqlite_events.js';
import { loadOrCreateSecret } from '../db/secrets.js';
import { dialectOf } from '../db/connect.js';
import { describeDatabaseFailure } from '../db/errors.js';
import { PRODUCTS } from '../mcp/products/index.js';
import { randomBytes } from 'node:crypto';
import { isEntryPoint } from './entry_point.js';
import { CLIENT_COMMANDS, KEY_COMMANDS } from '../auth/admin.js';

export type Output = (line: string) => void;

export interface CommandIo {
  out: Output;
  stdin: () => Promise<string>;
  /** Tells running servers, after commit, what the command changed (never fails the command: see instanceNotifier). */
  notify(events: PorticoEvent[]): Promise<void>;
}

export interface AdminCommand {
  usage: string;
  /**
   * `open` connects to the database and migrates it: a command calls it once its arguments are
   * checked, so that a usage error opens nothing (no SQLite file is made at a mistyped path, and an
   * unreachable database does not hide the usage error).
   */
  run(open: () => Promise<Db>, args: string[], io: CommandIo): Promise<void>;
  /** Work that needs no database (e.g. verifying an exported file): used when `when(args)` holds. */
  offline?: { when(args: string[]): boolean; run(args: string[], io: { out: Output }): Promise<void> };
}

/** Exit codes, documented in docs/errors.md ("Operator CLI exit codes"). */
export const EXIT = { ok: 0, failed: 1, usage: 2, notFound: 3, chainBroken: 4 } as const;

/** A command line the command cannot run: exit 2, with the command's usage line. The message names the problem. */
export { UsageError };

export const COMMANDS: Record<string, AdminCommand> = {
  'tenant create': {
    usage: 'tenant create <slug> --name <name>',
    async run(open, args, { out }) {
      const { values, positionals } = parseArgs({ args, options: { name: { type: 'string' } }, allowPositionals: true });
      const slug = theOne(positionals, 'tenant create', 'a slug');
      if (!values.name) throw new UsageError('tenant create needs --name');
      const db = await open();
      const tenant = await db.transaction(async (trx) => {
        const created = await createTenant(trx, { slug, name: values.name! });
        await appendAudit(trx, { tenantId: created.id, kind: 'admin', name: 'tenant.create', args: { slug: created.slug, name: created.name }, outcome: 'ok' });
        return created;
      });
      out(`created tenant ${tenant.slug} (${tenant.id})`);
    },
  },
  'tenant list': {
    usage: 'tenant list',
    async run(open, args, { out }) {
      parseArgs({ args, options: {} });
      const db = await open();
      const tenants = await listTenants(db);
      if (!tenants.length) return out('no tenants');
      for (const t of tenants) out(`${t.slug.padEnd(20)} ${t.name.padEnd(30)} ${`${t.members} member(s)`.padEnd(14)} ${(t.suspended_at ? 'suspended' : 'active').padEnd(10)} ${t.id}`);
    },
  },
  'tenant suspend': {
    usage: 'tenant suspend <slug>   (revokes every connection; nobody signs in or connects until it is resumed)',
    async run(open, args, { out, notify }) {
      const slug = onePositional(args, 'tenant suspend', 'a slug');
      const db = await open();
      const tenant = await requireTenantBySlug(db, slug);
      const { changed, revoked } = await db.transaction(async (trx) => {
        if (!(await setTenantSuspended(trx, tenant.id, true))) return { changed: false, revoked: [] };
        const revoked = await revokeConnections(trx, await liveConnections(trx, tenant.id), 'tenant suspended');
        await appendAudit(trx, { tenantId: tenant.id, kind: 'admin', name: 'tenant.suspend', args: { slug: tenant.slug, revoked_connections: revoked.length }, outcome: 'ok' });
        return { changed: true, revoked };
      });
      await notify(revocationEvents(revoked));
      out(changed ? `suspended ${tenant.slug}${revokedNote(revoked)}` : `${tenant.slug} is already suspended`);
    },
  },
  'tenant resume': {
    usage: 'tenant resume <slug>    (its members may sign in and connect again; revoked connections stay revoked)',
    async run(open, args, { out }) {
      const slug = onePositional(args, 'tenant resume', 'a slug');
      const db = await open();
      const tenant = await requireTenantBySlug(db, slug);
      const changed = await db.transaction(async (trx) => {
        if (!(await setTenantSuspended(trx, tenant.id, false))) return false;
        await appendAudit(trx, { tenantId: tenant.id, kind: 'admin', name: 'tenant.resume', args: { slug: tenant.slug }, outcome: 'ok' });
        return true;
      });
      out(changed ? `resumed ${tenant.slug}` : `${tenant.slug} is not suspended`);
    },
  },
  'user add': {
    usage: 'user add --tenant <slug> --email <email> --role admin|member --password-stdin [--name <display name>]',
    async run(open, args, { out, stdin }) {
      const { values } = parseArgs({
        args,
        options: { tenant: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, 'password-stdin': { type: 'boolean' }, name: { type: 'string' } },
      });
      requireOptions(values, ['tenant', 'email', 'role', 'password-stdin'], 'user add');
      assertRole(values.role!);
      const password = (await stdin()).replace(/\r?\n$/, '');
      const db = await open();
      const user = await db.transaction(async (trx) => {
        const tenant = await requireTenantBySlug(trx, values.tenant!);
        const created = await createUser(trx, { email: values.email!, password, displayName: values.name });
        await addMembership(trx, { userId: created.id, tenantId: tenant.id, role: values.role! });
        await appendAudit(trx, { tenantId: tenant.id, userId: created.id, kind: 'admin', name: 'user.add', args: { email: created.email, role: values.role }, outcome: 'ok' });
        return created;
      });
      out(`added ${user.email} to ${values.tenant} as ${values.role}`);
    },
  },
  'user password': {
    usage: 'user password --email <email> --password-stdin [--revoke-connections]   (ends their sign-ins; optionally revokes every connection)',
    async run(open, args, { out, stdin, notify }) {
      const { values } = parseArgs({ args, options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' }, 'revoke-connections': { type: 'boolean' } } });
      requireOptions(values, ['email', 'password-stdin'], 'user password');
      const db = await open();
      const user = await findUserByEmail(db, values.email!);
      if (!user) throw new AppError('not_found', `no user ${normaliseEmail(values.email!)}`);
      const password = (await stdin()).replace(/\r?\n$/, '');
      const { ended, revoked } = await db.transaction(async (trx) => {
        const ended = await setPassword(trx, user.id, password);
        return { ended, revoked: await recordForPerson(trx, user, 'user.password', values['revoke-connections'] ? 'password reset' : undefined) };
      });
      await notify(revocationEvents(revoked));
      out(`set a new password for ${user.email}; ended ${ended} sign-in session(s)${revokedNote(revoked)}`);
    },
  },
  'user list': {
    usage: 'user list [--tenant <slug>]',
    async run(open, args, { out }) {
      const { values } = parseArgs({ args, options: { tenant: { type: 'string' } } });
      // An empty one (`--tenant "$ORG"`, ORG unset) would otherwise list every organization's people.
      if (values.tenant !== undefined && !values.tenant.trim()) throw new UsageError('user list --tenant needs a slug');
      const db = await open();
      const tenantId = values.tenant !== undefined ? (await requireTenantBySlug(db, values.tenant)).id : undefined;
      const users = await listUsers(db, tenantId);
      if (!users.length) return out('no users');
      for (const u of users) out(`${u.email.padEnd(32)} ${u.memberships.padEnd(40)} ${(u.disabled_at ? 'disabled' : 'active').padEnd(9)} ${u.id}`);
    },
  },
  'user disable': {
    usage: 'user disable --email <email>   (no sign-in; ends their sign-ins and revokes every connection until user enable)',
    async run(open, args, { out, notify }) {
      const { db, user } = await requireUser(open, args, 'user disable');
      const { changed, endedSignIns, revoked } = await db.transaction(async (trx) => {
        const { changed, endedSignIns } = await setUserDisabled(trx, user.id, true);
        return { changed, endedSignIns, revoked: changed ? await recordForPerson(trx, user, 'user.disable', 'account disabled') : [] };
      });
      await notify(revocationEvents(revoked));
      out(changed ? `disabled ${user.email}; ended ${endedSignIns} sign-in session(s)${revokedNote(revoked)}` : `${user.email} is already disabled`);
    },
  },
  'user enable': {
    usage: 'user enable --email <email>    (they may sign in and connect again; revoked connections stay revoked)',
    async run(open, args, { out }) {
      const { db, user } = await requireUser(open, args, 'user enable');
      const changed = await db.transaction(async (trx) => {
        if (!(await setUserDisabled(trx, user.id, false)).changed) return false;
        for (const tenantId of await logsOf(trx, user.id)) {
          await appendAudit(trx, { tenantId, userId: user.id, kind: 'admin', name: 'user.enable', args: { email: user.email }, outcome: 'ok' });
        }
        return true;
      });
      out(changed ? `enabled ${user.email}` : `${user.email} is not disabled`);
    },
  },
  'member add': {
    usage: 'member add --tenant <slug> --email <email> --role admin|member   (an existing user joins another tenant)',
    async run(open, args, { out }) {
      const { db, tenant, user, role } = await memberOptions(open, args, 'member add', true);
      await db.transaction(async (trx) => {
        await addMembership(trx, { userId: user.id, tenantId: tenant.id, role: role! });
        await appendAudit(trx, { tenantId: tenant.id, userId: user.id, kind: 'admin', name: 'member.add', args: { email: user.email, role }, outcome: 'ok' });
      });
      out(`added ${user.email} to ${tenant.slug} as ${role}`);
    },
  },
  'member role': {
    usage: 'member role --tenant <slug> --email <email> --role admin|member   (revokes connections the new role may not hold)',
    async run(open, args, { out, notify }) {
      const { db, tenant, user, role } = await memberOptions(open, args, 'member role', true);
      // Products only administrators may connect (aegis): a former administrator's connections to them end.
      const adminsOnly = PRODUCTS.filter((p) => p.connectableBy === 'admins').map((p) => p.id);
      const { before, revoked } = await db.transaction(async (trx) => {
        const before = await setMembershipRole(trx, { userId: user.id, tenantId: tenant.id, role: role! });
        if (before === role) return { before, revoked: [] };
        const revoked = role === 'admin' ? [] : await revokeConnections(trx, await liveConnections(trx, tenant.id, { userId: user.id, products: adminsOnly }), 'role changed to member');
        await appendAudit(trx, { tenantId: tenant.id, userId: user.id, kind: 'admin', name: 'member.role', args: { email: user.email, from: before, to: role, revoked_connections: revoked.length }, outcome: 'ok' });
        return { before, revoked };
      });
      await notify(revocationEvents(revoked));
      out(before === role ? `${user.email} is already ${role} in ${tenant.slug}` : `${user.email} is now ${role} in ${tenant.slug}${revokedNote(revoked)}`);
    },
  },
  'member remove': {
    usage: "member remove --tenant <slug> --email <email>   (revokes the person's connections there)",
    async run(open, args, { out, notify }) {
      const { db, tenant, user } = await memberOptions(open, args, 'member remove', false);
      const revoked = await db.transaction(async (trx) => {
        const before = await removeMembership(trx, { userId: user.id, tenantId: tenant.id });
        const revoked = await revokeConnections(trx, await liveConnections(trx, tenant.id, { userId: user.id }), 'membership removed');
        await appendAudit(trx, { tenantId: tenant.id, userId: user.id, kind: 'admin', name: 'member.remove', args: { email: user.email, role: before, revoked_connections: revoked.length }, outcome: 'ok' });
        return revoked;
      });
      await notify(revocationEvents(revoked));
      out(`removed ${user.email} from ${tenant.slug}${revokedNote(revoked)}`);
    },
  },
  'audit verify': {
    usage: 'audit verify (--tenant <slug> | --file <export.jsonl|export.csv>) [--checkpoint <seq:hash>]   (a chain end noted earlier)',
    async run(open, args, { out }) {
      const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, checkpoint: { type: 'string' } } });
      if (!values.tenant) throw new UsageError('audit verify needs --tenant or --file');
      const checkpoint = checkpointOption(values.checkpoint);
      const db = await open();
      const tenant = await requireTenantBySlug(db, values.tenant);
      report(await verifyStoredChain(db, tenant.id, checkpoint), checkpoint, out);
    },
    offline: {
      when: (args) => args.some((arg) => arg === '--file' || arg.startsWith('--file=')),
      async run(args, { out }) {
        const { values } = parseArgs({ args, options: { file: { type: 'string' }, tenant: { type: 'string' }, checkpoint: { type: 'string' } } });
        if (values.tenant !== undefined) throw new UsageError('audit verify takes --tenant or --file, not both');
        const checkpoint = checkpointOption(values.checkpoint);
        const file = values.file!;
        if (!file.trim()) throw new UsageError('audit verify --file needs the path of an export');
        const result = await verifyChain(readExport(file), undefined, checkpoint).catch((error: Error) => {
          throw new AppError('invalid_request', `cannot read ${file}: ${error.message}`, { cause: error });
        });
        // An empty file (or a CSV header alone) proves nothing: it is what a failed export leaves behind.
        if (result.ok && result.checked === 0) {
          throw new AppError('invalid_request', `${file} holds no audit records (an empty file or a CSV header only): nothing was verified`);
        }
        report(result, checkpoint, out);
      },
    },
  },
  'audit export': {
    usage: 'audit export --tenant <slug> [--format jsonl|csv]   (writes to standard output)',
    async run(open, args, { out }) {
      const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, format: { type: 'string', default: 'jsonl' } } });
      if (!values.tenant) throw new UsageError('audit export needs --tenant');
      if (values.format !== 'jsonl' && values.format !== 'csv') throw new UsageError(`--format must be jsonl or csv, got "${values.format}"`);
      const db = await open();
      const tenant = await requireTenantBySlug(db, values.tenant);
      for await (const chunk of exportChunks(chainPages(db, tenant.id), values.format)) out(chunk.replace(/\r?\n$/, ''));
    },
  },
  'surface ship': {
    usage: 'surface ship <product>     (makes a roadmap product live on every instance)',
    run: (open, args, io) => changeSurface(open, args, 'live', io),
  },
  'surface unship': {
    usage: 'surface unship <product>   (returns a product to the roadmap)',
    run: (open, args, io) => changeSurface(open, args, 'roadmap', io),
  },
  'surface list': {
    usage: 'surface list',
    async run(open, args, { out }) {
      parseArgs({ args, options: {} });
      const db = await open();
      const overrides = await surfaceOverrides(db);
      const width = String(Math.max(...PRODUCTS.map((p) => p.tools.length))).length;
      for (const p of PRODUCTS) out(`${p.id.padEnd(12)} ${(overrides.get(p.id) ?? p.status).padEnd(8)} ${String(p.tools.length).padStart(width)} tools  ${p.title}`);
    },
  },
};

/** A usage error naming every one of `options` the command line left out. */
function requireOptions(values: Record<string, unknown>, options: readonly string[], command: string): void {
  const missing = options.filter((option) => !values[option]);
  if (missing.length) throw new UsageError(`${command} needs ${missing.map((option) => `--${option}`).join(', ')}`);
}

/** The user named by `--email` (the command's only option), who must exist, and the database opened to find them. */
async function requireUser(open: () => Promise<Db>, args: string[], command: string): Promise<{ db: Db; user: User }> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } } });
  requireOptions(values, ['email'], command);
  const db = await open();
  const user = await findUserByEmail(db, values.email!);
  if (!user) throw new AppError('not_found', `no user ${normaliseEmail(values.email!)}`);
  return { db, user };
}

/**
 * Records what happened to a person (`name`) in each of their audit logs (logsOf), first revoking
 * their connections in that organization when `revokeFor` gives the reason; returns those revoked.
 */
async function recordForPerson(trx: DbOrTrx, user: User, name: string, revokeFor?: string): Promise<DbConnectionRow[]> {
  const revoked: DbConnectionRow[] = [];
  const logs = await logsOf(trx, user.id);
  const live = new Map<string, DbConnectionRow[]>();
  for (const tenantId of logs) if (tenantId && revokeFor) live.set(tenantId, await liveConnections(trx, tenantId, { userId: user.id }));
  // Every organization's connections before any audit record (lockConnections).
  await lockConnections(trx, [...live.values()].flat().map((c) => c.id));
  for (const tenantId of logs) {
    const here = tenantId && revokeFor ? await revokeConnections(trx, live.get(tenantId) ?? [], revokeFor) : [];
    revoked.push(...here);
    await appendAudit(trx, { tenantId, userId: user.id, kind: 'admin', name, args: { email: user.email, revoked_connections: here.length }, outcome: 'ok' });
  }
  return revoked;
}

/**
 * The audit logs that record what happens to a person: those of every organization they belong to,
 * suspended ones included, so each customer sees it; the system log (null) for someone in none.
 */
async function logsOf(db: DbOrTrx, userId: string): Promise<Array<string | null>> {
  const tenants: string[] = (await db('memberships').where({ user_id: userId }).orderBy('tenant_id').select('tenant_id')).map((row: { tenant_id: string }) => row.tenant_id);
  return tenants.length ? tenants : [null];
}

/** The tenant, user and (when `withRole`) role a `member` command names; the user must exist. */
async function memberOptions(open: () => Promise<Db>, args: string[], command: string, withRole: boolean): Promise<{ db: Db; tenant: DbTenantRow; user: User; role?: Role }> {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, email: { type: 'string' }, ...(withRole ? { role: { type: 'string' as const } } : {}) } });
  requireOptions(values, withRole ? ['tenant', 'email', 'role'] : ['tenant', 'email'], command);
  const role = (values as { role?: string }).role;
  if (role !== undefined) assertRole(role);
  const db = await open();
  const tenant = await requireTenantBySlug(db, values.tenant!);
  const user = await findUserByEmail(db, values.email!);
  if (!user) throw new AppError('not_found', `no user ${normaliseEmail(values.email!)} (create one with user add)`);
  return { db, tenant, user, role };
}

/** Pauses before each new attempt to send a notification whose connection failed (ms), as db/notify.ts. */
const NOTIFY_RETRIES = [25, 150, 800];

/**
 * Tells running instances, after commit, what this process changed: on PostgreSQL every instance
 * through LISTEN/NOTIFY (db/notify.ts), on SQLite the server through the events file beside the
 * database (db/sqlite_events.ts). What was committed stays committed if that fails: the command
 * warns, and the servers' own checks find the change within seconds (revoked connections every
 * second, mcp/index.ts; surfaces every two, db/surfaces.ts).
 */
function instanceNotifier(open: () => Promise<Db>, database: DatabaseConfig, warn: Output): (events: PorticoEvent[]) => Promise<void> {
  return async (events) => {
    if (!events.length) return;
    try {
      const file = eventsFileOf(database);
      if (file) return await appendEvents(file, events);
      const db = await open();
      if (dialectOf(db) !== 'postgres') return;
      const channel = channelFor(await loadOrCreateSecret(db, 'mac_key', () => randomBytes(32).toString('base64url')));
      for (const event of events) {
        const send = () => db.raw('select pg_notify(?, ?)', [channel, JSON.stringify({ from: 'admin-cli', event })]);
        for (let attempt = 0; ; attempt += 1) {
          try {
            await send();
            break;
          } catch (error) {
            if (attempt >= NOTIFY_RETRIES.length) throw error;
            await new Promise((resolve) => setTimeout(resolve, NOTIFY_RETRIES[attempt]));
          }
        }
      }
    } catch (error) {
      warn(`warning: the change is made, but running servers could not be told at once (${describeDatabaseFailure(error) ?? (error instanceof Error ? error.message : String(error))}); they will notice it within a few seconds`);
    }
  };
}

async function changeSurface(open: () => Promise<Db>, args: string[], status: 'live' | 'roadmap', { out, notify }: CommandIo): Promise<void> {
  const verb = status === 'live' ? 'ship' : 'unship';
  const product = onePositional(args, `surface ${verb}`, 'a product');
  const known = PRODUCTS.find((p) => p.id === product);
  if (!known) throw new AppError('not_found', `no product "${product}"; products: ${PRODUCTS.map((p) => p.id).join(', ')}`);
  const db = await open();
  const changed = await db.transaction(async (trx) => {
    // Already so: nothing to record or announce (the instances' polls keep them in step).
    if (((await surfaceOverrides(trx)).get(product) ?? known.status) === status) return false;
    await setSurfaceStatus(trx, product, status);
    await appendAudit(trx, { tenantId: null, kind: 'admin', name: `surface.${verb}`, product, args: { product }, outcome: 'ok' });
    return true;
  });
  if (!changed) return out(`${product} is already ${status}`);
  // Running instances hear it at once (should the message be lost, they poll every few seconds).
  await notify([{ type: 'surface.changed', product, status }]);
  out(`${product} is now ${status}`);
}

/** A verification that found a broken record: exit code 4, distinct from usage and lookup errors. */
export class ChainBroken extends Error {}

/** `--checkpoint seq:hash`, as `audit verify` printed it as the chain's end. */
function checkpointOption(value: string | undefined): Head | undefined {
  if (value === undefined) return undefined;
  const checkpoint = parseCheckpoint(value);
  if (!checkpoint) throw new UsageError(`--checkpoint must be <seq>:<hash> as audit verify printed it ("chain end: 42:9f86d0…", 64 hex digits), got "${value}"`);
  return checkpoint;
}

/**
 * The verdict; an intact chain's end goes on a line of its own, to be kept outside Portico as a
 * checkpoint: a later `--checkpoint` proves nothing up to it was changed since.
 */
function report(result: AuditVerification, checkpoint: Head | undefined, out: Output): void {
  if (result.ok) {
    out(`ok: ${result.checked} records verified${checkpoint ? ', up to the checkpoint given' : ''}`);
    if (result.end) out(`chain end: ${formatCheckpoint(result.end)}`);
    return;
  }
  const broken = result.first_broken!;
  throw new ChainBroken(`broken at record seq ${broken.seq}${broken.id ? ` (id ${broken.id})` : ''}: ${broken.reason}; ${result.checked} records before it verified`);
}

/** Registers further commands (clients, audit, surfaces) from the parts that own them. */
export function registerCommand(name: string, command: AdminCommand): void {
  COMMANDS[name] = command;
}

function help(): string {
  return ['usage: npm run admin -- <command>', '', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

const HELP = new Set(['help', '--help', '-h']);

/** `tenant create --help`: a command's own arguments ask for its usage (not after `--`, where they are values). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** What node:util parseArgs throws (strict mode) for an unknown option, a missing value or a stray argument. */
function isParseArgsError(error: unknown): error is TypeError {
  return error instanceof TypeError && !!(error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
}

/** The lines to print and the exit code for a failed command. */
function failure(error: unknown, usage: string): { code: number; lines: string[] } {
  if (error instanceof ConfigError) return { code: EXIT.usage, lines: [`error: invalid configuration: ${error.message}`] };
  if (error instanceof UsageError || isParseArgsError(error)) return { code: EXIT.usage, lines: [`error: ${error.message}`, `usage: npm run admin -- ${usage}`] };
  if (error instanceof ChainBroken) return { code: EXIT.chainBroken, lines: [`audit chain ${error.message}`] };
  // Portico's own messages as they are; a database failure (or an `internal` one caused by it) in
  // Portico's words, never the driver's text, which names the failed SQL statement.
  const own = isAppError(error) && error.code !== 'internal';
  const message = (own ? undefined : describeDatabaseFailure(error)) ?? (error instanceof Error ? error.message : String(error));
  return { code: isAppError(error) && error.code === 'not_found' ? EXIT.notFound : EXIT.failed, lines: [`error: ${message}`] };
}

/**
 * A SQLite database the CLI would otherwise create: a mistyped DATABASE_URL, or DATA_DIR left
 * unset for a server started with its own, would get a new empty database, and the command would
 * report success on it (or list nothing). Only a server's start or `npm run migrate` creates one.
 */
function requireExisting(database: DatabaseConfig): void {
  if (database.kind !== 'sqlite' || !isMissingSqlite(database)) return;
  throw new Error(`no database at ${database.filename}: set DATABASE_URL or DATA_DIR as the server has them, or create it with npm run migrate`);
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads the password from standard input: pipe it in');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs one CLI invocation; returns the exit code. */
export async function runAdmin(argv: string[], io: { out: Output; err: Output; stdin?: () => Promise<string> }, env = process.env): Promise<number> {
  if (HELP.has(argv[0])) {
    io.out(help());
    return EXIT.ok;
  }
  if (!argv.length) {
    io.err(`error: no command given\n\n${help()}`);
    return EXIT.usage;
  }
  const name = [argv.slice(0, 2).join(' '), argv[0]].find((candidate) => COMMANDS[candidate]);
  if (!name) {
    io.err(`error: unknown command "${argv.join(' ')}"\n\n${help()}`);
    return EXIT.usage;
  }
  const command = COMMANDS[name];
  const rest = argv.slice(name.split(' ').length);
  if (asksForHelp(rest)) {
    io.out(`usage: npm run admin -- ${command.usage}`);
    return EXIT.ok;
  }
  let db: Db | undefined;
  try {
    if (command.offline?.when(rest)) {
      await command.offline.run(rest, { out: io.out });
      return EXIT.ok;
    }
    const config = loadConfig(env);
    let opened: Promise<Db> | undefined;
    const open = () =>
      (opened ??= (async () => {
        requireKeptDatabase(config.database);
        requireExisting(config.database);
        const opened = connectDatabase(config.database);
        db = opened;
        // In turn with instances starting on the same PostgreSQL (app.ts): both migrate.
        await exclusively(opened, () => migrateLatest(opened));
        return opened;
      })());
    await command.run(open, rest, { out: io.out, stdin: io.stdin ?? readStdin, notify: instanceNotifier(open, config.database, io.err) });
    return EXIT.ok;
  } catch (error) {
    const { code, lines } = failure(error, command.usage);
    for (const line of lines) io.err(line);
    return code;
  } finally {
    await db?.destroy();
  }
}

Object.assign(COMMANDS, CLIENT_COMMANDS, KEY_COMMANDS); // client add | list; keys list | add | activate | rotate | retire

// No top-level await: a module holding one is evaluated asynchronously, and so is every module
// that imports it (test files among them, which must declare their tests synchronously).
if (isEntryPoint(import.meta.url)) {
  void runAdmin(process.argv.slice(2), { out: (l) => console.log(l), err: (l) => console.error(l) }).then((code) => process.exit(code));
}
