/**
 * Operator CLI: `npm run admin -- <command>`. Errors print one clear line and exit non-zero (EXIT);
 * every command runs in one transaction, so a failure writes nothing. Options are parsed strictly:
 * an unknown option or an unexpected argument is a usage error, never ignored.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../shared/config.js';
import { AppError, isAppError, UsageError } from '../shared/errors.js';
import { connectDatabase, type Db } from '../db/connect.js';
import { migrateLatest } from '../db/migrate.js';
import { addMembership, assertRole, createTenant, createUser, listTenants, listUsers, requireTenantBySlug } from '../db/accounts.js';
import { appendAudit, chainPages, chainRows, verifyChain, type AuditVerification } from '../db/audit.js';
import { exportChunks, readExport } from '../db/audit_export.js';
import { setSurfaceStatus, surfaceOverrides } from '../db/surfaces.js';
import { channelFor } from '../db/notify.js';
import { loadOrCreateSecret } from '../db/secrets.js';
import { dialectOf } from '../db/connect.js';
import { PRODUCTS } from '../mcp/products/index.js';
import { randomBytes } from 'node:crypto';

export type Output = (line: string) => void;

export interface AdminCommand {
  usage: string;
  run(db: Db, args: string[], io: { out: Output; stdin: () => Promise<string> }): Promise<void>;
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
    async run(db, args, { out }) {
      const { values, positionals } = parseArgs({ args, options: { name: { type: 'string' } }, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError(positionals.length ? `tenant create takes one slug, got ${positionals.length}` : 'tenant create needs a slug');
      if (!values.name) throw new UsageError('tenant create needs --name');
      const tenant = await db.transaction(async (trx) => {
        const created = await createTenant(trx, { slug: positionals[0], name: values.name! });
        await appendAudit(trx, { tenantId: created.id, kind: 'admin', name: 'tenant.create', args: { slug: created.slug, name: created.name }, outcome: 'ok' });
        return created;
      });
      out(`created tenant ${tenant.slug} (${tenant.id})`);
    },
  },
  'tenant list': {
    usage: 'tenant list',
    async run(db, args, { out }) {
      parseArgs({ args, options: {} });
      const tenants = await listTenants(db);
      if (!tenants.length) return out('no tenants');
      for (const t of tenants) out(`${t.slug.padEnd(20)} ${t.name.padEnd(30)} ${t.members} member(s)  ${t.id}`);
    },
  },
  'user add': {
    usage: 'user add --tenant <slug> --email <email> --role admin|member --password-stdin [--name <display name>]',
    async run(db, args, { out, stdin }) {
      const { values } = parseArgs({
        args,
        options: { tenant: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, 'password-stdin': { type: 'boolean' }, name: { type: 'string' } },
      });
      const missing = (['tenant', 'email', 'role', 'password-stdin'] as const).filter((option) => !values[option]);
      if (missing.length) throw new UsageError(`user add needs ${missing.map((option) => `--${option}`).join(', ')}`);
      assertRole(values.role!);
      const password = (await stdin()).replace(/\r?\n$/, '');
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
  'user list': {
    usage: 'user list [--tenant <slug>]',
    async run(db, args, { out }) {
      const { values } = parseArgs({ args, options: { tenant: { type: 'string' } } });
      const tenantId = values.tenant ? (await requireTenantBySlug(db, values.tenant)).id : undefined;
      const users = await listUsers(db, tenantId);
      if (!users.length) return out('no users');
      for (const u of users) out(`${u.email.padEnd(32)} ${u.memberships.padEnd(40)} ${u.id}`);
    },
  },
  'audit verify': {
    usage: 'audit verify (--tenant <slug> | --file <export.jsonl|export.csv>)',
    async run(db, args, { out }) {
      const { values } = parseArgs({ args, options: { tenant: { type: 'string' } } });
      if (!values.tenant) throw new UsageError('audit verify needs --tenant or --file');
      const tenant = await requireTenantBySlug(db, values.tenant);
      report(await verifyChain(chainRows(db, tenant.id)), out);
    },
    offline: {
      when: (args) => args.some((arg) => arg === '--file' || arg.startsWith('--file=')),
      async run(args, { out }) {
        const { values } = parseArgs({ args, options: { file: { type: 'string' }, tenant: { type: 'string' } } });
        if (values.tenant !== undefined) throw new UsageError('audit verify takes --tenant or --file, not both');
        const file = values.file!;
        const result = await verifyChain(readExport(file)).catch((error: Error) => {
          throw new AppError('invalid_request', `cannot read ${file}: ${error.message}`, { cause: error });
        });
        // An empty file (or a CSV header alone) proves nothing: it is what a failed export leaves behind.
        if (result.ok && result.checked === 0) {
          throw new AppError('invalid_request', `${file} holds no audit records (an empty file or a CSV header only): nothing was verified`);
        }
        report(result, out);
      },
    },
  },
  'audit export': {
    usage: 'audit export --tenant <slug> [--format jsonl|csv]   (writes to standard output)',
    async run(db, args, { out }) {
      const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, format: { type: 'string', default: 'jsonl' } } });
      if (!values.tenant) throw new UsageError('audit export needs --tenant');
      if (values.format !== 'jsonl' && values.format !== 'csv') throw new UsageError(`--format must be jsonl or csv, got "${values.format}"`);
      const tenant = await requireTenantBySlug(db, values.tenant);
      for await (const chunk of exportChunks(chainPages(db, tenant.id), values.format)) out(chunk.replace(/\r?\n$/, ''));
    },
  },
  'surface ship': {
    usage: 'surface ship <product>     (makes a roadmap product live on every instance)',
    run: (db, args, io) => changeSurface(db, args, 'live', io.out),
  },
  'surface unship': {
    usage: 'surface unship <product>   (returns a product to the roadmap)',
    run: (db, args, io) => changeSurface(db, args, 'roadmap', io.out),
  },
  'surface list': {
    usage: 'surface list',
    async run(db, args, { out }) {
      parseArgs({ args, options: {} });
      const overrides = await surfaceOverrides(db);
      for (const p of PRODUCTS) out(`${p.id.padEnd(12)} ${(overrides.get(p.id) ?? p.status).padEnd(8)} ${p.tools.length} tools  ${p.title}`);
    },
  },
};

async function changeSurface(db: Db, args: string[], status: 'live' | 'roadmap', out: Output): Promise<void> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
  const verb = status === 'live' ? 'ship' : 'unship';
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `surface ${verb} takes one product, got ${positionals.length}` : `surface ${verb} needs a product`);
  const [product] = positionals;
  const known = PRODUCTS.find((p) => p.id === product);
  if (!known) throw new AppError('not_found', `no product "${product}"; products: ${PRODUCTS.map((p) => p.id).join(', ')}`);
  await db.transaction(async (trx) => {
    await setSurfaceStatus(trx, product, status);
    await appendAudit(trx, { tenantId: null, kind: 'admin', name: `surface.${verb}`, product, args: { product }, outcome: 'ok' });
  });
  // Running instances on PostgreSQL hear it at once; on SQLite the server notices within seconds (it polls).
  if (dialectOf(db) === 'postgres') {
    const macKey = await loadOrCreateSecret(db, 'mac_key', () => randomBytes(32).toString('base64url'));
    await db.raw('select pg_notify(?, ?)', [channelFor(macKey), JSON.stringify({ from: 'admin-cli', event: { type: 'surface.changed', product, status } })]);
  }
  out(`${product} is now ${status}`);
}

/** A verification that found a broken record: exit code 4, distinct from usage and lookup errors. */
export class ChainBroken extends Error {}

function report(result: AuditVerification, out: Output): void {
  if (result.ok) return out(`ok: ${result.checked} records verified`);
  const broken = result.first_broken!;
  throw new ChainBroken(`broken at record seq ${broken.seq} (id ${broken.id}): ${broken.reason}; ${result.checked} records before it verified`);
}

/** Registers further commands (clients, audit, surfaces) from the parts that own them. */
export function registerCommand(name: string, command: AdminCommand): void {
  COMMANDS[name] = command;
}

function help(): string {
  return ['usage: npm run admin -- <command>', '', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

const HELP = new Set(['help', '--help', '-h']);

/** What node:util parseArgs throws (strict mode) for an unknown option, a missing value or a stray argument. */
function isParseArgsError(error: unknown): error is TypeError {
  return error instanceof TypeError && !!(error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
}

/** The lines to print and the exit code for a failed command. */
function failure(error: unknown, usage: string): { code: number; lines: string[] } {
  if (error instanceof ConfigError) return { code: EXIT.usage, lines: [`error: invalid configuration: ${error.message}`] };
  if (error instanceof UsageError || isParseArgsError(error)) return { code: EXIT.usage, lines: [`error: ${error.message}`, `usage: npm run admin -- ${usage}`] };
  if (error instanceof ChainBroken) return { code: EXIT.chainBroken, lines: [`audit chain ${error.message}`] };
  const message = error instanceof Error ? error.message : String(error);
  return { code: isAppError(error) && error.code === 'not_found' ? EXIT.notFound : EXIT.failed, lines: [`error: ${message}`] };
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
  let db: Db | undefined;
  try {
    const rest = argv.slice(name.split(' ').length);
    if (command.offline?.when(rest)) {
      await command.offline.run(rest, { out: io.out });
      return EXIT.ok;
    }
    const config = loadConfig(env);
    db = connectDatabase(config.database);
    await migrateLatest(db);
    await command.run(db, rest, { out: io.out, stdin: io.stdin ?? readStdin });
    return EXIT.ok;
  } catch (error) {
    const { code, lines } = failure(error, command.usage);
    for (const line of lines) io.err(line);
    return code;
  } finally {
    await db?.destroy();
  }
}

Object.assign(COMMANDS, (await import('../auth/admin.js')).CLIENT_COMMANDS); // client add | client list

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = await runAdmin(process.argv.slice(2), { out: (l) => console.log(l), err: (l) => console.error(l) });
  process.exit(code);
}
